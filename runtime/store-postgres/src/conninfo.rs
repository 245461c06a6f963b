//! libpq's `key=value` connection strings (`host=db user=tenx sslmode=verify-full`): [`take`]
//! splits named parameters off one, with libpq's quoting (`'…'` with `\'` and `\\`, spaces
//! around `=`), so tenx reads the parameters tokio-postgres does not know (`sslrootcert`) or
//! knows only in part (`sslmode`).

/// `conninfo` without the parameters named in `keys`, and each of those found, in order, with
/// its value unquoted. A string that does not scan (an unclosed quote, a key without `=`) is
/// returned whole, for tokio-postgres to report.
pub(crate) fn take(conninfo: &str, keys: &[&str]) -> (String, Vec<(String, String)>) {
    let Some(pairs) = scan(conninfo) else {
        return (conninfo.to_owned(), Vec::new());
    };
    let mut kept = Vec::new();
    let mut found = Vec::new();
    for pair in pairs {
        if keys.contains(&pair.key.as_str()) {
            found.push((pair.key, pair.value));
        } else {
            kept.push(conninfo.get(pair.span.0..pair.span.1).unwrap_or_default());
        }
    }
    (kept.join(" "), found)
}

/// One `key=value` of a connection string.
struct Pair {
    key: String,
    value: String,
    /// Where the pair (key to the end of the value) is in the string, in bytes.
    span: (usize, usize),
}

/// Every pair of `conninfo`, or `None` when it does not scan.
fn scan(conninfo: &str) -> Option<Vec<Pair>> {
    let mut chars = conninfo.char_indices().peekable();
    let mut pairs = Vec::new();
    loop {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some(&(start, _)) = chars.peek() else {
            return Some(pairs);
        };
        let mut key = String::new();
        while let Some((_, c)) = chars.next_if(|(_, c)| !c.is_whitespace() && *c != '=') {
            key.push(c);
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        chars.next_if(|(_, c)| *c == '=')?;
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        let end;
        if chars.next_if(|(_, c)| *c == '\'').is_some() {
            loop {
                match chars.next()? {
                    (_, '\\') => value.push(chars.next()?.1),
                    (at, '\'') => {
                        end = at.saturating_add(1);
                        break;
                    }
                    (_, c) => value.push(c),
                }
            }
        } else {
            loop {
                match chars.peek().copied() {
                    None => {
                        end = conninfo.len();
                        break;
                    }
                    Some((at, c)) if c.is_whitespace() => {
                        end = at;
                        break;
                    }
                    Some((_, '\\')) => {
                        chars.next();
                        value.push(chars.next()?.1);
                    }
                    Some((_, c)) => {
                        chars.next();
                        value.push(c);
                    }
                }
            }
        }
        pairs.push(Pair {
            key,
            value,
            span: (start, end),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_parameters_come_out_unquoted_and_the_rest_stays() {
        let (rest, found) = take(
            "host=db  sslmode = verify-full user='ann o\\'neil' sslrootcert='/etc/my ca.pem' dbname=tenx",
            &["sslmode", "sslrootcert"],
        );
        assert_eq!(rest, "host=db user='ann o\\'neil' dbname=tenx");
        assert_eq!(
            found,
            vec![
                ("sslmode".to_owned(), "verify-full".to_owned()),
                ("sslrootcert".to_owned(), "/etc/my ca.pem".to_owned())
            ]
        );
        let (rest, found) = take("host=db sslrootcert=/a\\ b.pem", &["sslrootcert"]);
        assert_eq!(
            (rest.as_str(), found),
            ("host=db", vec![("sslrootcert".to_owned(), "/a b.pem".to_owned())])
        );
        assert_eq!(take("host='db", &["sslmode"]), ("host='db".to_owned(), Vec::new()));
        assert_eq!(take("host", &["sslmode"]), ("host".to_owned(), Vec::new()));
        assert_eq!(take("", &["sslmode"]), (String::new(), Vec::new()));
        assert_eq!(
            take("a='' b=x", &["b"]),
            ("a=''".to_owned(), vec![("b".to_owned(), "x".to_owned())])
        );
        // As in libpq, blanks after `=` are skipped: `a`'s value is `b=x`.
        assert_eq!(take("a= b=x", &["b"]), ("a= b=x".to_owned(), Vec::new()));
    }
}
