//! Small facts about text that several layers share: what can name
//! something in code, and a hash that stays the same across processes.

/// Whether `word` can name something in code: letters, digits and `_`,
/// not led by a digit.
pub fn is_identifier(word: &str) -> bool {
    word.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && word.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// FNV-1a over `bytes`: unlike std's hasher it is the same in every
/// process and version, so it can name files on disk, and it is fast
/// enough to tell whether a buffer's text changed.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_words_not_led_by_a_digit() {
        assert!(is_identifier("parse_port") && is_identifier("_x") && is_identifier("größe"));
        assert!(!is_identifier("") && !is_identifier("2fast") && !is_identifier("a-b") && !is_identifier("a.b"));
    }

    #[test]
    fn the_hash_is_fnv1a() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
