//! The `random_id` builtin: a UUID version 4 from the operating system's CSPRNG (`getrandom`),
//! lowercase and hyphenated.

use std::fmt::Write as _;

/// Why no id could be made (the OS random source failed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no random source is available")]
pub struct RandomError;

/// A new UUID v4, e.g. `3f0c2b9e-8d1a-4c57-9e0b-6a1d2f3c4b5a`.
pub fn random_id() -> Result<String, RandomError> {
    let mut bytes = [0_u8; 16];
    getrandom::fill(&mut bytes).map_err(|_| RandomError)?;
    Ok(format_v4(bytes))
}

/// `bytes` as a UUID v4: the version nibble set to 4 and the variant bits to `10`.
fn format_v4(mut bytes: [u8; 16]) -> String {
    if let Some(version) = bytes.get_mut(6) {
        *version = (*version & 0x0f) | 0x40;
    }
    if let Some(variant) = bytes.get_mut(8) {
        *variant = (*variant & 0x3f) | 0x80;
    }
    let mut text = String::with_capacity(36);
    for (index, byte) in bytes.iter().enumerate() {
        if matches!(index, 4 | 6 | 8 | 10) {
            text.push('-');
        }
        let _ = write!(text, "{byte:02x}");
    }
    text
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn the_layout_is_a_v4_uuid() {
        assert_eq!(format_v4([0xff; 16]), "ffffffff-ffff-4fff-bfff-ffffffffffff");
        assert_eq!(format_v4([0; 16]), "00000000-0000-4000-8000-000000000000");
    }

    #[test]
    fn ids_are_well_formed_and_distinct() {
        let ids: BTreeSet<String> = (0..200).map(|_| random_id().unwrap()).collect();
        assert_eq!(ids.len(), 200);
        for id in &ids {
            assert_eq!(id.len(), 36);
            let groups: Vec<&str> = id.split('-').collect();
            assert_eq!(groups.iter().map(|g| g.len()).collect::<Vec<_>>(), vec![8, 4, 4, 4, 12]);
            assert!(groups[2].starts_with('4'), "{id}");
            assert!(matches!(groups[3].chars().next(), Some('8' | '9' | 'a' | 'b')), "{id}");
            assert!(
                id.chars()
                    .all(|c| c == '-' || c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            );
        }
    }
}
