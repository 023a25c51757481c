//! A whole kernel `.config`, read line by line from a plain, gzip, xz or zstd stream (so
//! `/proc/config.gz` and Debian's `config.*.xz` read directly), into a map from symbol to value
//! that tells "set to n / not set" apart from "absent".

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read};

use super::compress::Compression;
use super::{Line, LineError, Setting, Symbol, Value, parse_line};
use crate::files::limits::MAX_CONFIG;

/// What a config says about one symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State<'a> {
    /// `CONFIG_X=…` (never `Value::No`).
    Set(&'a Value),
    /// `# CONFIG_X is not set`: the symbol was visible and is off.
    NotSet,
    /// The config does not mention the symbol: its dependencies hide it, or the kernel has none.
    Absent,
}

impl State<'_> {
    /// The state as shown to a person: `y`, `m`, `"text"`, `not set`, `absent`.
    pub(crate) fn describe(&self) -> String {
        match self {
            State::Set(value) => value.to_string(),
            State::NotSet => "not set".to_string(),
            State::Absent => "absent".to_string(),
        }
    }

    /// Whether the symbol is on (`y` or `m`).
    pub(crate) fn is_enabled(&self) -> bool {
        matches!(self, State::Set(Value::Yes | Value::Module))
    }
}

/// A parsed kernel configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KernelConfig {
    settings: BTreeMap<Symbol, Value>,
    /// sha256 of the uncompressed text, as `sha256sum .config` prints it.
    sha256: String,
}

/// Why a stream is not a usable kernel config.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    #[error("the file is empty; pass a kernel .config or /proc/config.gz")]
    Empty,
    #[error("not a kernel config: line {line}: {cause}; pass a kernel .config or /proc/config.gz")]
    BadLine { line: usize, cause: LineError },
    #[error(
        "not a kernel config: no CONFIG_ setting in it; pass a kernel .config or /proc/config.gz"
    )]
    NoSettings,
    #[error("cannot read {format} data: {cause}; the file is truncated or corrupt")]
    Corrupt { format: &'static str, cause: io::Error },
    #[error(
        "the config is over {} MiB{}, more than any kernel config (a decompression bomb?); pass the kernel's .config",
        MAX_CONFIG >> 20,
        if *.compressed { " once decompressed" } else { "" }
    )]
    TooBig { compressed: bool },
    #[error("{0}")]
    Io(io::Error),
}

impl KernelConfig {
    /// Reads a config, decompressing it first when it starts with gzip, xz or zstd magic.
    pub(crate) fn read(input: impl Read) -> Result<KernelConfig, ConfigError> {
        let mut input = BufReader::with_capacity(64 * 1024, input);
        let head = input.fill_buf().map_err(ConfigError::Io)?;
        if head.is_empty() {
            return Err(ConfigError::Empty);
        }
        let format = Compression::detect(head);
        let corrupt = |source| ConfigError::Corrupt { format: format.name(), cause: source };
        let decoder = format.decoder(input).map_err(corrupt)?;
        let compressed = format != Compression::None;
        let config = KernelConfig::read_plain(BufReader::new(decoder)).map_err(|e| match e {
            ConfigError::Io(source) if compressed => corrupt(source),
            ConfigError::Empty if compressed => ConfigError::NoSettings,
            ConfigError::TooBig { .. } => ConfigError::TooBig { compressed },
            other => other,
        })?;
        Ok(config)
    }

    /// Reads an uncompressed config, one line at a time, at most [`MAX_CONFIG`] bytes of it.
    pub(crate) fn read_plain(input: impl BufRead) -> Result<KernelConfig, ConfigError> {
        let mut input = input.take(MAX_CONFIG + 1);
        use sha2::Digest;
        let mut settings = BTreeMap::new();
        let mut digest = sha2::Sha256::new();
        let mut buf = Vec::new();
        let mut line = 0;
        loop {
            buf.clear();
            if input.read_until(b'\n', &mut buf).map_err(ConfigError::Io)? == 0 {
                break;
            }
            line += 1;
            digest.update(&buf);
            let text = String::from_utf8_lossy(&buf);
            match parse_line(&text) {
                Ok(Line::Setting(Setting { symbol, value })) => {
                    settings.insert(symbol, value);
                }
                Ok(Line::Blank | Line::Comment) => {}
                Err(source) => return Err(ConfigError::BadLine { line, cause: source }),
            }
        }
        if input.limit() == 0 {
            return Err(ConfigError::TooBig { compressed: false });
        }
        if line == 0 {
            return Err(ConfigError::Empty);
        }
        if settings.is_empty() {
            return Err(ConfigError::NoSettings);
        }
        Ok(KernelConfig { settings, sha256: crate::files::digest::hex(&digest.finalize()) })
    }

    /// Parses config text already in memory.
    pub(crate) fn parse(text: &[u8]) -> Result<KernelConfig, ConfigError> {
        KernelConfig::read_plain(text)
    }

    /// Whether both configs set the same symbols to the same values (an SBOM keeps the
    /// settings of a `.config`, not its bytes).
    /// `# … is not set` lines do not count: oe-core's SBOM leaves comments out.
    pub(crate) fn same_settings(&self, other: &KernelConfig) -> bool {
        fn on(c: &KernelConfig) -> Vec<(&Symbol, &Value)> {
            c.settings.iter().filter(|(_, v)| **v != Value::No).collect()
        }
        on(self) == on(other)
    }

    /// sha256 of the uncompressed config text (the `.config` file's own sha256).
    pub(crate) fn sha256(&self) -> &str {
        &self.sha256
    }

    /// What the config says about `symbol` (with its `CONFIG_` prefix).
    pub(crate) fn state(&self, symbol: &str) -> State<'_> {
        match self.settings.get(symbol) {
            None => State::Absent,
            Some(Value::No) => State::NotSet,
            Some(value) => State::Set(value),
        }
    }

    /// Whether `CONFIG_PREEMPT_RT=y`.
    /// Every symbol the config sets or leaves unset, sorted.
    pub(crate) fn symbols(&self) -> impl Iterator<Item = &str> {
        self.settings.keys().map(Symbol::as_str)
    }

    #[cfg(test)]
    pub(crate) fn is_preempt_rt(&self) -> bool {
        self.state("CONFIG_PREEMPT_RT") == State::Set(&Value::Yes)
    }

    /// The number of symbols the config mentions (set or not set).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.settings.len()
    }
}

impl std::borrow::Borrow<str> for Symbol {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const SAMPLE: &str = "#\n# Automatically generated file; DO NOT EDIT.\n#\nCONFIG_EXPERT=y\n\
        CONFIG_PREEMPT_RT=y\n# CONFIG_PREEMPT is not set\nCONFIG_HZ=250\n\
        CONFIG_LOCALVERSION=\"-rt\"\n";

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(data).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn tells_set_not_set_and_absent_apart() {
        let config = KernelConfig::read(SAMPLE.as_bytes()).unwrap();
        assert!(config.is_preempt_rt());
        assert_eq!(config.state("CONFIG_PREEMPT"), State::NotSet);
        assert_eq!(config.state("CONFIG_NO_HZ_FULL"), State::Absent);
        assert_eq!(config.state("CONFIG_HZ").describe(), "250");
        assert_eq!(config.state("CONFIG_LOCALVERSION").describe(), "\"-rt\"");
        assert_eq!(config.len(), 5);
    }

    #[test]
    fn sha256_is_the_uncompressed_files_own() {
        let plain = KernelConfig::read(SAMPLE.as_bytes()).unwrap();
        let gz = KernelConfig::read(gzip(SAMPLE.as_bytes()).as_slice()).unwrap();
        assert_eq!(plain.sha256(), crate::files::digest::sha256_hex(SAMPLE.as_bytes()));
        assert_eq!(gz.sha256(), plain.sha256());
        let other = KernelConfig::read("CONFIG_PREEMPT_RT=y\n".as_bytes()).unwrap();
        assert_ne!(other.sha256(), plain.sha256());
    }

    #[test]
    fn reads_gzip_and_xz() {
        let config = KernelConfig::read(gzip(SAMPLE.as_bytes()).as_slice()).unwrap();
        assert!(config.is_preempt_rt());
        let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 1);
        xz.write_all(SAMPLE.as_bytes()).unwrap();
        let config = KernelConfig::read(xz.finish().unwrap().as_slice()).unwrap();
        assert_eq!(config.state("CONFIG_HZ").describe(), "250");
    }

    #[test]
    fn rejects_empty_binary_and_corrupt_input() {
        assert!(matches!(KernelConfig::read(&b""[..]), Err(ConfigError::Empty)));
        let err = KernelConfig::read(&b"\x7fELF\x02\x01\x01binary"[..]).unwrap_err();
        assert!(err.to_string().starts_with("not a kernel config: line 1:"), "{err}");
        assert!(matches!(
            KernelConfig::read(&b"# only comments\n"[..]),
            Err(ConfigError::NoSettings)
        ));
        let gz = gzip(SAMPLE.as_bytes());
        let err = KernelConfig::read(&gz[..gz.len() - 12]).unwrap_err();
        assert!(err.to_string().contains("gzip data"), "{err}");
        assert!(err.to_string().contains("truncated or corrupt"), "{err}");
    }

    /// Issue 23 item 5: a `.config.zst` of 134 KB that inflates to 4 GiB of newlines ran for
    /// minutes; now reading stops at 16 MiB, compressed or not.
    #[test]
    fn a_config_over_16_mib_is_refused_compressed_or_plain() {
        // One long comment line keeps the test fast; the cap counts bytes, not lines.
        let mut big = b"CONFIG_PREEMPT_RT=y\n# ".to_vec();
        big.resize(MAX_CONFIG as usize - 1, b'x');
        big.push(b'\n');
        assert!(KernelConfig::read(big.as_slice()).unwrap().is_preempt_rt(), "16 MiB is read");
        big.insert(0, b'\n');
        let err = KernelConfig::read(gzip(&big).as_slice()).unwrap_err();
        assert!(matches!(err, ConfigError::TooBig { compressed: true }), "{err}");
        assert!(err.to_string().starts_with("the config is over 16 MiB once decompressed"));
        let err = KernelConfig::read(big.as_slice()).unwrap_err();
        assert!(matches!(err, ConfigError::TooBig { compressed: false }), "{err}");
    }
}
