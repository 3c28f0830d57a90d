//! Decoders for the two compact blobs real Redis 7 puts inside DUMP payloads of small
//! collections: the **listpack** (types 16, 17, 18, 20, 25) and the **intset** (type 11).
//! Orcinus only reads them; it writes the plain RDB encodings (kv/FORMAT.md).
//!
//! Listpack: `total_bytes u32 LE | count u16 LE (65535 = unknown) | entries | 0xFF`, each entry
//! `encoding+data | backlen` where backlen is the entry's length in 1–5 bytes. Intset:
//! `width u32 LE (2, 4, 8) | count u32 LE | count × width-byte LE signed integers`, strictly
//! ascending.
//!
//! Invariants: the whole blob is validated (sizes, terminator, every backlen, the count)
//! before anything is returned; integer entries come back as their decimal text, as Redis
//! returns them; nothing is allocated from a declared size (entries are pushed one at a time
//! and each consumes at least two bytes of the blob).

use super::rdb_codec::{BadFormat, DecodeResult, Reader};

const LP_HEADER: usize = 6;
const LP_EOF: u8 = 0xff;
const LP_UNKNOWN_COUNT: u16 = u16::MAX;

/// The length of `len`'s backlen encoding (Redis `lpEncodeBacklen`).
fn backlen_size(len: usize) -> usize {
    match len {
        0..=127 => 1,
        128..=16_382 => 2,
        16_383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    }
}

/// Redis's backlen bytes for an entry of `len` bytes, in blob order.
fn backlen_bytes(len: usize) -> Vec<u8> {
    let size = backlen_size(len);
    // Byte i (from the end of the entry backwards) holds bits 7i..7i+6; all but the first
    // byte in blob order carry the continuation bit 128.
    (0..size)
        .rev()
        .map(|i| {
            let bits = ((len >> (7 * i)) & 0x7f) as u8;
            if i + 1 == size { bits } else { bits | 0x80 }
        })
        .collect()
}

/// Sign-extends the low `bits` bits of `raw`.
fn sign_extend(raw: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((raw << shift) as i64) >> shift
}

fn int_entry(r: &mut Reader<'_>, width: usize) -> DecodeResult<(Vec<u8>, usize)> {
    let mut raw = [0u8; 8];
    let bytes = r.take(width)?;
    raw.get_mut(..width)
        .ok_or(BadFormat)?
        .copy_from_slice(bytes);
    let bits = u32::try_from(width * 8).map_err(|_| BadFormat)?;
    let value = sign_extend(u64::from_le_bytes(raw), bits);
    Ok((value.to_string().into_bytes(), 1 + width))
}

/// One entry (without its backlen): its value and its encoded length.
fn entry(r: &mut Reader<'_>, first: u8) -> DecodeResult<(Vec<u8>, usize)> {
    let string = |r: &mut Reader<'_>, len: usize, header: usize| {
        Ok::<_, BadFormat>((r.take(len)?.to_vec(), header + len))
    };
    match first {
        0x00..=0x7f => Ok((first.to_string().into_bytes(), 1)),
        0x80..=0xbf => string(r, usize::from(first & 0x3f), 1),
        0xc0..=0xdf => {
            let raw = (u64::from(first & 0x1f) << 8) | u64::from(r.byte()?);
            Ok((sign_extend(raw, 13).to_string().into_bytes(), 2))
        }
        0xe0..=0xef => {
            let len = (usize::from(first & 0x0f) << 8) | usize::from(r.byte()?);
            string(r, len, 2)
        }
        0xf0 => {
            let len = usize::try_from(u32::from_le_bytes(r.array()?)).map_err(|_| BadFormat)?;
            string(r, len, 5)
        }
        0xf1 => int_entry(r, 2),
        0xf2 => int_entry(r, 3),
        0xf3 => int_entry(r, 4),
        0xf4 => int_entry(r, 8),
        _ => Err(BadFormat),
    }
}

/// Decodes and validates a listpack blob; returns its entries in order.
pub fn listpack_entries(blob: &[u8]) -> DecodeResult<Vec<Vec<u8>>> {
    let mut r = Reader::new(blob);
    let total = usize::try_from(u32::from_le_bytes(r.array()?)).map_err(|_| BadFormat)?;
    let declared = u16::from_le_bytes(r.array()?);
    if total != blob.len() || total < LP_HEADER + 1 {
        return Err(BadFormat);
    }
    let mut entries = Vec::new();
    loop {
        let first = r.byte()?;
        if first == LP_EOF {
            break;
        }
        let (value, len) = entry(&mut r, first)?;
        if r.take(backlen_size(len))? != backlen_bytes(len).as_slice() {
            return Err(BadFormat);
        }
        entries.push(value);
    }
    let count_ok = declared == LP_UNKNOWN_COUNT || usize::from(declared) == entries.len();
    if r.remaining() != 0 || !count_ok {
        return Err(BadFormat);
    }
    Ok(entries)
}

/// Decodes and validates an intset blob; returns its members as decimal text.
pub fn intset_members(blob: &[u8]) -> DecodeResult<Vec<Vec<u8>>> {
    let mut r = Reader::new(blob);
    let width = usize::try_from(u32::from_le_bytes(r.array()?)).map_err(|_| BadFormat)?;
    let count = usize::try_from(u32::from_le_bytes(r.array()?)).map_err(|_| BadFormat)?;
    if !matches!(width, 2 | 4 | 8) || count.checked_mul(width) != Some(r.remaining()) {
        return Err(BadFormat);
    }
    let mut members = Vec::new();
    let mut previous: Option<i64> = None;
    for _ in 0..count {
        let (text, _) = int_entry(&mut r, width)?;
        let value: i64 = std::str::from_utf8(&text)
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or(BadFormat)?;
        if previous.is_some_and(|p| p >= value) {
            return Err(BadFormat);
        }
        previous = Some(value);
        members.push(text);
    }
    Ok(members)
}

/// Builds a listpack of raw entries (encoding+data), adding backlens and the header.
#[cfg(test)]
pub(super) fn build_listpack(entries: &[&[u8]]) -> Vec<u8> {
    let mut body = Vec::new();
    for e in entries {
        body.extend_from_slice(e);
        body.extend_from_slice(&backlen_bytes(e.len()));
    }
    body.push(LP_EOF);
    let mut out = ((body.len() + LP_HEADER) as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use build_listpack as listpack;

    #[test]
    fn every_entry_encoding_decodes() {
        let long = vec![b'x'; 300];
        let mut long_entry = vec![0xe0 | (300 >> 8) as u8, (300 & 0xff) as u8];
        long_entry.extend_from_slice(&long);
        let blob = listpack(&[
            &[5],
            &[0x83, b'a', b'b', b'c'],
            &[0xdf, 0xff],
            &long_entry,
            &[0xf1, 0x00, 0x80],
            &[0xf2, 0xff, 0xff, 0x7f],
            &[0xf3, 0xff, 0xff, 0xff, 0xff],
            &[0xf4, 0, 0, 0, 0, 0, 0, 0, 0x80],
        ]);
        let got = listpack_entries(&blob).unwrap();
        let want: Vec<Vec<u8>> = vec![
            b"5".to_vec(),
            b"abc".to_vec(),
            b"-1".to_vec(),
            long,
            b"-32768".to_vec(),
            b"8388607".to_vec(),
            b"-1".to_vec(),
            i64::MIN.to_string().into_bytes(),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn backlens_match_redis() {
        assert_eq!(backlen_bytes(5), [5]);
        assert_eq!(backlen_bytes(127), [127]);
        assert_eq!(backlen_bytes(128), [1, 0x80]);
        assert_eq!(backlen_bytes(300), [2, 0x80 | 44]);
    }

    #[test]
    fn malformed_listpacks_are_rejected() {
        let good = listpack(&[&[0x81, b'a'], &[7]]);
        assert_eq!(listpack_entries(&good).unwrap().len(), 2);
        let mut wrong_total = good.clone();
        wrong_total[0] += 1;
        assert!(listpack_entries(&wrong_total).is_err());
        let mut wrong_count = good.clone();
        wrong_count[4] = 3;
        assert!(listpack_entries(&wrong_count).is_err());
        let mut unknown_count = good.clone();
        unknown_count[4] = 0xff;
        unknown_count[5] = 0xff;
        assert_eq!(listpack_entries(&unknown_count).unwrap().len(), 2);
        let mut bad_backlen = good.clone();
        bad_backlen[8] = 9;
        assert!(listpack_entries(&bad_backlen).is_err());
        let mut no_eof = good.clone();
        no_eof.pop();
        assert!(listpack_entries(&no_eof).is_err());
        assert!(listpack_entries(&listpack(&[&[0xf5]])).is_err());
    }

    #[test]
    fn intsets_decode_and_must_ascend() {
        let mut blob = 2u32.to_le_bytes().to_vec();
        blob.extend_from_slice(&3u32.to_le_bytes());
        for v in [-5i16, 1, 300] {
            blob.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(
            intset_members(&blob).unwrap(),
            [b"-5".to_vec(), b"1".to_vec(), b"300".to_vec()]
        );
        let mut unordered = blob.clone();
        unordered.swap(8, 10);
        unordered.swap(9, 11);
        assert!(intset_members(&unordered).is_err());
        assert!(intset_members(&blob[..blob.len() - 1]).is_err());
        let mut bad_width = blob;
        bad_width[0] = 3;
        assert!(intset_members(&bad_width).is_err());
    }
}
