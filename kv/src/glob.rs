//! Redis glob matching (`*`, `?`, `[abc]`, `[^a-z]`, `\x`) for KEYS, SCAN MATCH and CONFIG GET.
//!
//! Invariant: matching never recurses and runs in O(pattern × subject) time — the classic
//! single-backtrack-point algorithm — so hostile patterns such as `*a*a*a*…b` cannot blow up
//! (CVE-2022-36021, CVE-2024-31228).

/// True if `subject` matches the glob `pattern`.
#[must_use]
pub fn glob_match(pattern: &[u8], subject: &[u8]) -> bool {
    let (mut p, mut s) = (0usize, 0usize);
    // Position after the last `*` seen, and the subject position it is currently matched to.
    let mut backtrack: Option<(usize, usize)> = None;
    while s < subject.len() {
        let Some(&sc) = subject.get(s) else { break };
        match pattern.get(p) {
            Some(b'*') => {
                backtrack = Some((p + 1, s));
                p += 1;
                continue;
            }
            Some(_) => {
                if let Some(next_p) = match_one(pattern, p, sc) {
                    p = next_p;
                    s += 1;
                    continue;
                }
            }
            None => {}
        }
        match backtrack {
            Some((star_p, star_s)) => {
                backtrack = Some((star_p, star_s + 1));
                p = star_p;
                s = star_s + 1;
            }
            None => return false,
        }
    }
    pattern
        .get(p..)
        .is_some_and(|rest| rest.iter().all(|&c| c == b'*'))
}

/// Matches one non-`*` pattern element at `p` against `c`; returns the next pattern position.
fn match_one(pattern: &[u8], p: usize, c: u8) -> Option<usize> {
    match pattern.get(p)? {
        b'?' => Some(p + 1),
        b'\\' if p + 1 < pattern.len() => (pattern.get(p + 1) == Some(&c)).then_some(p + 2),
        b'[' => match_class(pattern, p + 1, c),
        &lit => (lit == c).then_some(p + 1),
    }
}

/// Matches a `[...]` class starting after the `[`; returns the position after the `]`.
fn match_class(pattern: &[u8], mut p: usize, c: u8) -> Option<usize> {
    let negate = pattern.get(p) == Some(&b'^');
    if negate {
        p += 1;
    }
    let mut matched = false;
    loop {
        match pattern.get(p) {
            // An unterminated class ends at the end of the pattern (as in Redis).
            None => break,
            Some(b']') => {
                p += 1;
                break;
            }
            Some(b'\\') if p + 1 < pattern.len() => {
                matched |= pattern.get(p + 1) == Some(&c);
                p += 2;
            }
            Some(&lo) if pattern.get(p + 1) == Some(&b'-') && p + 2 < pattern.len() => {
                let hi = pattern.get(p + 2).copied().unwrap_or(lo);
                let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
                matched |= (lo..=hi).contains(&c);
                p += 3;
            }
            Some(&lit) => {
                matched |= lit == c;
                p += 1;
            }
        }
    }
    (matched != negate).then_some(p)
}

/// The literal prefix of `pattern` before its first special character (for prefix scans).
#[must_use]
pub fn literal_prefix(pattern: &[u8]) -> &[u8] {
    let end = pattern
        .iter()
        .position(|c| matches!(c, b'*' | b'?' | b'[' | b'\\'))
        .unwrap_or(pattern.len());
    pattern.get(..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_like_redis() {
        assert!(glob_match(b"*", b""));
        assert!(glob_match(b"*", b"anything"));
        assert!(glob_match(b"h?llo", b"hello"));
        assert!(!glob_match(b"h?llo", b"hllo"));
        assert!(glob_match(b"h*llo", b"heeeello"));
        assert!(glob_match(b"h[ae]llo", b"hallo"));
        assert!(!glob_match(b"h[ae]llo", b"hillo"));
        assert!(glob_match(b"h[^e]llo", b"hallo"));
        assert!(!glob_match(b"h[^e]llo", b"hello"));
        assert!(glob_match(b"h[a-b]llo", b"hbllo"));
        assert!(glob_match(b"h[b-a]llo", b"hallo"));
        assert!(glob_match(b"h\\*llo", b"h*llo"));
        assert!(!glob_match(b"h\\*llo", b"hello"));
        assert!(glob_match(b"key:*:end", b"key:1:2:end"));
        assert!(!glob_match(b"key:*:end", b"key:1:2:en"));
        assert!(glob_match(b"a*b*c", b"axxbyyc"));
        assert!(!glob_match(b"abc", b"abcd"));
        assert!(glob_match(b"abc**", b"abc"));
    }

    #[test]
    fn hostile_pattern_is_fast() {
        let pattern = b"*a".repeat(1000);
        let mut pattern = pattern;
        pattern.extend_from_slice(b"b");
        let subject = vec![b'a'; 10_000];
        let start = std::time::Instant::now();
        assert!(!glob_match(&pattern, &subject));
        // Quadratic worst case is 10^7 simple steps; exponential would never finish.
        assert!(start.elapsed().as_secs() < 30);
    }

    /// Reference: the obvious recursive matcher (exponential, fine for tiny inputs).
    fn reference(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'*') => (0..=s.len()).any(|i| reference(&p[1..], &s[i..])),
            Some(_) => match (s.first(), match_one(p, 0, s.first().copied().unwrap_or(0))) {
                (Some(_), Some(next)) => reference(&p[next..], &s[1..]),
                _ => false,
            },
        }
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_recursive_reference(
            pattern in "[ab*?\\[\\]^-]{0,8}",
            subject in "[ab\\[\\]^-]{0,8}",
        ) {
            proptest::prop_assert_eq!(
                glob_match(pattern.as_bytes(), subject.as_bytes()),
                reference(pattern.as_bytes(), subject.as_bytes()),
                "pattern {:?} subject {:?}", pattern, subject
            );
        }
    }

    #[test]
    fn literal_prefix_stops_at_specials() {
        assert_eq!(literal_prefix(b"user:*"), b"user:");
        assert_eq!(literal_prefix(b"abc"), b"abc");
        assert_eq!(literal_prefix(b"?x"), b"");
    }
}
