//! "Did you mean" suggestions by edit distance.

/// The candidate closest to `word`, when it is close enough to be a likely typo.
pub fn did_you_mean<'a, I, S>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a S>,
    S: AsRef<str> + ?Sized + 'a,
{
    if word.is_empty() {
        return None;
    }
    let limit = match word.chars().count() {
        0..=3 => 1,
        4..=7 => 2,
        _ => 3,
    };
    candidates
        .into_iter()
        .map(AsRef::as_ref)
        .filter(|c| *c != word)
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn suggests_close_names_only() {
        let names = ["billing", "triage", "END"];
        assert_eq!(did_you_mean("biling", &names), Some("billing"));
        assert_eq!(did_you_mean("zzz", &names), None);
        assert_eq!(did_you_mean("billing", &names), None);
    }
}
