//! Decoder for the **ziplist**, the compact blob Redis ≤ 6.2 put inside DUMP payloads of
//! small collections (types 10, 12, 13 and the nodes of 14), so their payloads restore here
//! too. Orcinus never writes it.
//!
//! Layout (Redis `ziplist.c`): `zlbytes u32 LE | zltail u32 LE | zllen u16 LE (65535 =
//! unknown) | entries | 0xFF`; an entry is `prevlen | encoding | data` where `prevlen` is the
//! previous entry's size (1 byte below 254, else `0xFE` + u32 LE) and the encoding is a 6-,
//! 14- or 32-bit-length string (`00`, `01`, `10` prefixes; the lengths big-endian) or an
//! integer (`0xC0` i16, `0xD0` i32, `0xE0` i64, `0xF0` i24, `0xFE` i8 — all LE — or
//! `0xF1`..`0xFD` for the values 0..12).
//!
//! Invariants: the blob is validated as Redis's `ziplistValidateIntegrity` does (total size,
//! terminator, every prevlen, the tail offset, the count) before anything is returned;
//! integer entries come back as their decimal text; nothing is allocated from a declared size.

use super::rdb_codec::{BadFormat, DecodeResult, Reader};

const ZL_HEADER: usize = 10;
const ZL_END: u8 = 0xff;
const ZL_BIG_PREVLEN: u8 = 0xfe;

fn int_text(bytes: &[u8]) -> DecodeResult<Vec<u8>> {
    let mut raw = [0u8; 8];
    raw.get_mut(..bytes.len())
        .ok_or(BadFormat)?
        .copy_from_slice(bytes);
    let shift = 64 - 8 * u32::try_from(bytes.len()).map_err(|_| BadFormat)?;
    let value = (i64::from_le_bytes(raw) << shift) >> shift;
    Ok(value.to_string().into_bytes())
}

/// One entry's value (after its prevlen), from its encoding byte on.
fn entry_value(r: &mut Reader<'_>) -> DecodeResult<Vec<u8>> {
    let first = r.byte()?;
    let string = |r: &mut Reader<'_>, len: usize| Ok::<_, BadFormat>(r.take(len)?.to_vec());
    match first {
        0x00..=0x3f => string(r, usize::from(first & 0x3f)),
        0x40..=0x7f => {
            let len = (usize::from(first & 0x3f) << 8) | usize::from(r.byte()?);
            string(r, len)
        }
        0x80..=0xbf => {
            let len = usize::try_from(u32::from_be_bytes(r.array()?)).map_err(|_| BadFormat)?;
            string(r, len)
        }
        0xc0 => int_text(r.take(2)?),
        0xd0 => int_text(r.take(4)?),
        0xe0 => int_text(r.take(8)?),
        0xf0 => int_text(r.take(3)?),
        0xfe => int_text(r.take(1)?),
        0xf1..=0xfd => Ok((first - 0xf1).to_string().into_bytes()),
        _ => Err(BadFormat),
    }
}

/// Decodes and validates a ziplist blob; returns its entries in order.
pub fn ziplist_entries(blob: &[u8]) -> DecodeResult<Vec<Vec<u8>>> {
    let mut r = Reader::new(blob);
    let total = usize::try_from(u32::from_le_bytes(r.array()?)).map_err(|_| BadFormat)?;
    let tail = usize::try_from(u32::from_le_bytes(r.array()?)).map_err(|_| BadFormat)?;
    let declared = u16::from_le_bytes(r.array()?);
    if total != blob.len() || total < ZL_HEADER + 1 {
        return Err(BadFormat);
    }
    let mut entries = Vec::new();
    let (mut previous_size, mut last_offset) = (0usize, ZL_HEADER);
    loop {
        let offset = blob.len() - r.remaining();
        let prevlen = match r.byte()? {
            ZL_END => break,
            ZL_BIG_PREVLEN => {
                usize::try_from(u32::from_le_bytes(r.array()?)).map_err(|_| BadFormat)?
            }
            small => usize::from(small),
        };
        if prevlen != previous_size {
            return Err(BadFormat);
        }
        entries.push(entry_value(&mut r)?);
        previous_size = blob.len() - r.remaining() - offset;
        last_offset = offset;
    }
    let count_ok = declared == u16::MAX || usize::from(declared) == entries.len();
    if r.remaining() != 0 || tail != last_offset || !count_ok {
        return Err(BadFormat);
    }
    Ok(entries)
}

/// Builds a ziplist of (encoding+data) entries, adding prevlens and the header.
#[cfg(test)]
pub(super) fn build_ziplist(entries: &[&[u8]]) -> Vec<u8> {
    let (mut body, mut prev, mut tail) = (Vec::new(), 0usize, ZL_HEADER);
    for e in entries {
        tail = ZL_HEADER + body.len();
        let start = body.len();
        if prev < 254 {
            body.push(prev as u8);
        } else {
            body.push(ZL_BIG_PREVLEN);
            body.extend_from_slice(&(prev as u32).to_le_bytes());
        }
        body.extend_from_slice(e);
        prev = body.len() - start;
    }
    body.push(ZL_END);
    let mut out = ((body.len() + ZL_HEADER) as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&(tail as u32).to_le_bytes());
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use build_ziplist as ziplist;

    #[test]
    fn every_encoding_decodes() {
        let long = vec![b'q'; 300];
        let mut long_entry = vec![0x40 | (300 >> 8) as u8, (300 & 0xff) as u8];
        long_entry.extend_from_slice(&long);
        let blob = ziplist(&[
            &[0x03, b'a', b'b', b'c'],
            &long_entry,
            &[0x80, 0, 0, 0, 1, b'z'],
            &[0xc0, 0x00, 0x80],
            &[0xd0, 0xff, 0xff, 0xff, 0xff],
            &[0xe0, 1, 0, 0, 0, 0, 0, 0, 0],
            &[0xf0, 0xff, 0xff, 0x7f],
            &[0xfe, 0x80],
            &[0xf1],
            &[0xfd],
        ]);
        let want: Vec<Vec<u8>> = [
            &b"abc"[..],
            &long,
            b"z",
            b"-32768",
            b"-1",
            b"1",
            b"8388607",
            b"-128",
            b"0",
            b"12",
        ]
        .iter()
        .map(|s| s.to_vec())
        .collect();
        assert_eq!(ziplist_entries(&blob).unwrap(), want);
        assert_eq!(
            ziplist_entries(&ziplist(&[])).unwrap(),
            Vec::<Vec<u8>>::new()
        );
    }

    #[test]
    fn malformed_ziplists_are_rejected() {
        let good = ziplist(&[&[0x01, b'a'], &[0xf2]]);
        assert_eq!(
            ziplist_entries(&good).unwrap(),
            [b"a".to_vec(), b"1".to_vec()]
        );
        let corrupt = |at: usize, value: u8| {
            let mut bad = good.clone();
            bad[at] = value;
            ziplist_entries(&bad)
        };
        assert!(corrupt(0, 99).is_err(), "zlbytes");
        assert!(corrupt(4, 10).is_err(), "zltail");
        assert!(corrupt(8, 3).is_err(), "zllen");
        assert!(corrupt(13, 2).is_err(), "prevlen");
        assert!(corrupt(14, 0xc1).is_err(), "encoding");
        let mut unknown = good.clone();
        unknown[8] = 0xff;
        unknown[9] = 0xff;
        assert_eq!(ziplist_entries(&unknown).unwrap().len(), 2);
        assert!(ziplist_entries(&good[..good.len() - 1]).is_err());
    }
}
