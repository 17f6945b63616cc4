//! The program-binary cache file: `MAGIC`, the key it was built for (the
//! source's hash and the build options' hash), the payload's length and its
//! FNV-1a checksum (little-endian `u64`s), then the driver's binary. The
//! checksum is checked before a driver sees the bytes, because drivers are
//! not robust against damaged binaries. There is no index: each (source,
//! options) pair has its own file, named by their hashes; the key in the
//! header catches a whole, undamaged file under another entry's name (one
//! copied or renamed over it), whose kernels would run with the wrong
//! build options and compute garbage.

use std::path::Path;

use crate::backend::cache::{self, ReadFailure};

const MAGIC: &[u8; 8] = b"CLFBIN02";
const HEADER: usize = 8 + 16 + 8 + 8;

/// What a cache file was built for: the hash of the program's source and
/// the hash of its build options, as in its file name.
pub(super) type Key = [u64; 2];

/// The largest payload written or read: 256 MiB, PoCL's own limit for the
/// binaries it serialises (`MAX_BINARY_SIZE` in `pocl_binary.c`). This
/// crate's programs are under 100 KB on PoCL and a few MB on GPU drivers;
/// a larger file is damage, and reading it would cost its size in memory.
pub(super) const MAX_PAYLOAD: usize = 256 << 20;

/// The cache file for the driver's binary `binary`, built for `key`.
pub(super) fn encode(key: Key, binary: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(HEADER + binary.len());
    v.extend_from_slice(MAGIC);
    v.extend_from_slice(&key[0].to_le_bytes());
    v.extend_from_slice(&key[1].to_le_bytes());
    v.extend_from_slice(&(binary.len() as u64).to_le_bytes());
    v.extend_from_slice(&cache::fnv1a(binary).to_le_bytes());
    v.extend_from_slice(binary);
    v
}

/// The payload of a cache file expected to hold `key`'s program, or why it
/// is unusable. It borrows from `file` and allocates nothing, whatever the
/// header says.
pub(super) fn decode(file: &[u8], key: Key) -> Result<&[u8], &'static str> {
    let field = |i: usize| {
        file.get(8 + 8 * i..16 + 8 * i)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    let (Some(magic), Some(source), Some(options), Some(len), Some(sum)) =
        (file.get(..8), field(0), field(1), field(2), field(3))
    else {
        return Err("bad header");
    };
    if magic != MAGIC {
        return Err("bad header");
    }
    if [source, options] != key {
        return Err("built for another program: its header names other source or build options");
    }
    let payload = &file[HEADER..];
    if payload.len() as u64 != len {
        return Err("truncated");
    }
    if cache::fnv1a(payload) != sum {
        return Err("checksum mismatch");
    }
    Ok(payload)
}

/// Reads the cache file `path`, refusing one larger than a header and
/// [`MAX_PAYLOAD`] before reading it.
pub(super) fn read(path: &Path) -> Result<Vec<u8>, ReadFailure> {
    cache::read_capped(path, (HEADER + MAX_PAYLOAD) as u64)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::backend::cache::testing::cases;

    const K: Key = [0x1234_5678_9abc_def0, 42];

    #[test]
    fn cache_files_detect_corruption() {
        let enc = encode(K, b"binary payload");
        assert_eq!(decode(&enc, K).unwrap(), b"binary payload");
        let mut flipped = enc.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(decode(&flipped, K), Err("checksum mismatch"));
        assert_eq!(decode(&enc[..enc.len() - 1], K), Err("truncated"));
        assert_eq!(decode(b"garbage", K), Err("bad header"));
        assert_eq!(decode(b"", K), Err("bad header"));
        assert_eq!(decode(&encode(K, b""), K).unwrap(), b"");
        // A whole file of another entry (a copy or a rename over this one).
        for other in [[K[0], 43], [K[0] ^ 1, K[1]]] {
            assert!(decode(&encode(other, b"binary payload"), K)
                .unwrap_err()
                .starts_with("built for another program"));
        }
    }

    /// A header that claims an enormous payload is refused without
    /// allocating it.
    #[test]
    fn huge_claimed_lengths_are_refused() {
        for len in [u64::MAX, 1 << 40, MAX_PAYLOAD as u64 + 1] {
            let mut file = MAGIC.to_vec();
            file.extend_from_slice(&K[0].to_le_bytes());
            file.extend_from_slice(&K[1].to_le_bytes());
            file.extend_from_slice(&len.to_le_bytes());
            file.extend_from_slice(&0u64.to_le_bytes());
            file.extend_from_slice(b"tiny");
            assert_eq!(decode(&file, K), Err("truncated"));
        }
    }

    #[test]
    fn oversized_files_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x.bin");
        let file = std::fs::File::create(&f).unwrap();
        // Sparse: no disk space is used.
        file.set_len((HEADER + MAX_PAYLOAD + 1) as u64).unwrap();
        assert!(matches!(read(&f), Err(ReadFailure::TooBig(_))));
        file.set_len(100).unwrap();
        assert_eq!(read(&f).unwrap().len(), 100);
    }

    proptest! {
        #![proptest_config(cases(2048))]

        /// Arbitrary bytes decode to an error, or (when they happen to form a
        /// file) to exactly their tail, checked.
        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..512),
        ) {
            if let Ok(payload) = decode(&bytes, K) {
                prop_assert_eq!(encode(K, payload), bytes);
            }
        }

        /// Arbitrary bytes behind a valid magic and key: the header's
        /// length and checksum fields are what is tested.
        #[test]
        fn arbitrary_headers_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let key: Vec<u8> = K.iter().flat_map(|k| k.to_le_bytes()).collect();
            let file: Vec<u8> = MAGIC.iter().chain(&key).chain(&bytes).copied().collect();
            if let Ok(payload) = decode(&file, K) {
                prop_assert_eq!(encode(K, payload), file);
            }
        }

        #[test]
        fn round_trip(payload in proptest::collection::vec(any::<u8>(), 0..1024)) {
            let file = encode(K, &payload);
            prop_assert_eq!(decode(&file, K), Ok(&payload[..]));
        }

        /// Every cut is noticed.
        #[test]
        fn truncations_are_rejected(
            payload in proptest::collection::vec(any::<u8>(), 0..1024),
            cut in any::<prop::sample::Index>(),
        ) {
            let file = encode(K, &payload);
            let cut = cut.index(file.len());
            prop_assert!(decode(&file[..cut], K).is_err());
        }

        /// Every single flipped bit is noticed (FNV-1a changes with any one
        /// byte), and so are several (flips that cancel out change nothing).
        #[test]
        fn bit_flips_are_rejected(
            payload in proptest::collection::vec(any::<u8>(), 1..1024),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..4),
        ) {
            let mut file = encode(K, &payload);
            for (at, bit) in &flips {
                let i = at.index(file.len());
                file[i] ^= 1 << bit;
            }
            let changed = file != encode(K, &payload);
            prop_assert_eq!(decode(&file, K).is_err(), changed);
        }
    }
}
