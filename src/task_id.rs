//! Task identity that is the same in every isolate and every process.
//!
//! A task is named by where it was declared: the URL of its module (`href`) and
//! `at`, the index of its `task()` call within that module. Host and workers
//! import modules in different orders, but both see the same `(href, at)`, so
//! the 32-bit FNV-1a hash of that pair routes a call to the same function on
//! both sides. The formula is the one knitting uses (`stableTaskID`): the hash
//! runs over the UTF-16 code units of `href` (what `charCodeAt` returns, lone
//! surrogates included) and then folds in `at` as a 32-bit integer.

const FNV_OFFSET: u32 = 0x811c_9dc5;
const FNV_PRIME: u32 = 0x0100_0193;

/// `stableTaskID(href, at)` over the UTF-16 code units of `href`.
pub fn stable_task_id(href_utf16: &[u16], at: i32) -> u32 {
    let hash = href_utf16.iter().fold(FNV_OFFSET, |hash, &unit| {
        (hash ^ u32::from(unit)).wrapping_mul(FNV_PRIME)
    });
    // `at` enters as JS `hash ^ at`: ToInt32(at), reinterpreted as 32 bits.
    (hash ^ at as u32).wrapping_mul(FNV_PRIME)
}

/// JS `ToInt32` for a number argument: truncate, wrap modulo 2^32; NaN and
/// infinities become 0.
pub fn to_int32(value: f64) -> i32 {
    if !value.is_finite() {
        return 0;
    }
    let wrapped = value.trunc().rem_euclid(4_294_967_296.0);
    wrapped as u32 as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads the project's copy of the stable task id vectors
    /// (`__test__/fixtures/stable-task-id.json`) without a JSON crate: the
    /// file is a flat list of `{"href": "...", "at": N, "id": N}` objects with
    /// plain ASCII hrefs.
    fn vectors() -> Vec<(String, i64, u32)> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/__test__/fixtures/stable-task-id.json"
        );
        let text = std::fs::read_to_string(path).expect("the vectors in the test fixtures");
        let mut out = Vec::new();
        for chunk in text.split("{\"href\": ").skip(1) {
            let href_end = chunk[1..].find('"').expect("closing quote") + 1;
            let href = chunk[1..href_end].to_string();
            let field = |name: &str| -> i64 {
                let start = chunk.find(name).expect(name) + name.len();
                let digits: String = chunk[start..]
                    .chars()
                    .skip_while(|c| !c.is_ascii_digit() && *c != '-')
                    .take_while(|c| c.is_ascii_digit() || *c == '-')
                    .collect();
                digits.parse().expect("number")
            };
            out.push((href, field("\"at\":"), field("\"id\":") as u32));
        }
        out
    }

    #[test]
    fn matches_every_shared_vector() {
        let cases = vectors();
        assert!(
            cases.len() >= 8,
            "expected the shared vectors, got {}",
            cases.len()
        );
        for (href, at, id) in cases {
            let units: Vec<u16> = href.encode_utf16().collect();
            assert_eq!(
                stable_task_id(&units, at as i32),
                id,
                "href {href:?} at {at}"
            );
        }
    }

    #[test]
    fn hashes_code_units_not_utf8_bytes() {
        // "é" is one UTF-16 unit but two UTF-8 bytes: the ids must differ from
        // a byte-wise hash, and a lone surrogate must hash as itself.
        let units: Vec<u16> = "é".encode_utf16().collect();
        let bytes: Vec<u16> = "é".bytes().map(u16::from).collect();
        assert_ne!(stable_task_id(&units, 0), stable_task_id(&bytes, 0));
        assert_ne!(stable_task_id(&[0xd800], 0), stable_task_id(&[0xdc00], 0));
    }

    #[test]
    fn to_int32_follows_js() {
        assert_eq!(to_int32(1.9), 1);
        assert_eq!(to_int32(-1.9), -1);
        assert_eq!(to_int32(4_294_967_296.0 + 5.0), 5);
        assert_eq!(to_int32(2_147_483_648.0), i32::MIN);
        assert_eq!(to_int32(f64::NAN), 0);
        assert_eq!(to_int32(f64::INFINITY), 0);
    }
}
