//! The command line of both modes: flags written `--key value` or
//! `--key=value`, and `-h`/`--help`.

use std::str::FromStr;

/// One flag as written: the whole argument, its key, and its value when
/// written `--key=value`.
pub struct Flag {
    pub arg: String,
    pub key: String,
    inline: Option<String>,
}

/// The flags of a command line, in order.
pub struct Flags<I> {
    args: I,
}

impl<I: Iterator<Item = String>> Flags<I> {
    pub fn new(args: I) -> Self {
        Flags { args }
    }

    /// The next flag; `Err` with an empty message for `-h`/`--help` (the
    /// caller prints its usage).
    pub fn next_flag(&mut self) -> Result<Option<Flag>, String> {
        let Some(arg) = self.args.next() else {
            return Ok(None);
        };
        if arg == "-h" || arg == "--help" {
            return Err(String::new());
        }
        let (key, inline) = match arg.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (arg.clone(), None),
        };
        Ok(Some(Flag { arg, key, inline }))
    }

    /// The flag's value (after `=`, else the next argument), parsed.
    pub fn value<T: FromStr>(&mut self, flag: &Flag) -> Result<T, String> {
        let key = &flag.key;
        let v = flag
            .inline
            .clone()
            .or_else(|| self.args.next())
            .ok_or_else(|| format!("{key} needs a value"))?;
        v.parse().map_err(|_| format!("bad value for {key}: {v:?}"))
    }
}
