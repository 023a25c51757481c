//! Kconfig dependency expressions (`EXPERT && ARCH_SUPPORTS_RT`, `!(A || B)`, `X = "y"`,
//! `$(cc-option,-mfoo)`), parsed from the text after `depends on`, `if` and `select … if`, and
//! evaluated against a [`KernelConfig`] with Kconfig's tristate logic (n = 0, m = 1, y = 2).
//!
//! A macro (`$(…)`) cannot be evaluated without the toolchain; it counts as met, so nothing is
//! ever blamed on it. Parsing is bounded: nesting deeper than [`MAX_DEPTH`] is not parsed.

use super::{KernelConfig, State, Value};

/// The deepest nesting of `(` and `!` parsed; real Kconfig files stay below 10.
pub(crate) const MAX_DEPTH: usize = 64;

/// The most tokens one expression may have (the longest in Linux 6.12 has under 100); this
/// bounds the depth of the `&&`/`||` chains that evaluation walks recursively.
pub(crate) const MAX_TOKENS: usize = 2048;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expr {
    /// A symbol without its `CONFIG_` prefix, or a constant `y`, `m`, `n`, or a number.
    Symbol(String),
    /// A quoted string constant.
    Text(String),
    /// `$(…)`, kept as written.
    Macro(String),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Compare(Cmp, Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Text(String),
    Macro(String),
    Open,
    Close,
    Not,
    And,
    Or,
    Cmp(Cmp),
}

fn tokens(text: &str) -> Option<Vec<Token>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let two = bytes.get(i..i + 2).unwrap_or_default();
        let (token, len) = match b {
            b' ' | b'\t' | b'\r' | b'\n' => {
                i += 1;
                continue;
            }
            b'(' => (Token::Open, 1),
            b')' => (Token::Close, 1),
            _ if two == b"&&" => (Token::And, 2),
            _ if two == b"||" => (Token::Or, 2),
            _ if two == b"!=" => (Token::Cmp(Cmp::Ne), 2),
            _ if two == b"<=" => (Token::Cmp(Cmp::Le), 2),
            _ if two == b">=" => (Token::Cmp(Cmp::Ge), 2),
            b'!' => (Token::Not, 1),
            b'=' => (Token::Cmp(Cmp::Eq), 1),
            b'<' => (Token::Cmp(Cmp::Lt), 1),
            b'>' => (Token::Cmp(Cmp::Gt), 1),
            b'"' | b'\'' => {
                let end = text[i + 1..].find(b as char)? + i + 1;
                (Token::Text(text[i + 1..end].to_string()), end + 1 - i)
            }
            b'$' if bytes.get(i + 1) == Some(&b'(') => {
                let mut depth = 0usize;
                let mut end = None;
                for (j, c) in bytes.iter().enumerate().skip(i + 1) {
                    match c {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(j);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let end = end?;
                (Token::Macro(text[i..=end].to_string()), end + 1 - i)
            }
            _ if b.is_ascii_alphanumeric() || b == b'_' => {
                let len = bytes[i..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                (Token::Word(text[i..i + len].to_string()), len)
            }
            _ => return None,
        };
        if out.len() == MAX_TOKENS {
            return None;
        }
        out.push(token);
        i += len;
    }
    Some(out)
}

/// Parses `text`; `None` when it is not a well-formed expression (or nests too deep).
pub(crate) fn parse(text: &str) -> Option<Expr> {
    let tokens = tokens(text)?;
    let mut parser = Parser { tokens: &tokens, at: 0 };
    let expr = parser.or(0)?;
    (parser.at == tokens.len()).then_some(expr)
}

struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    fn or(&mut self, depth: usize) -> Option<Expr> {
        let mut left = self.and(depth)?;
        while self.peek() == Some(&Token::Or) {
            self.at += 1;
            left = Expr::Or(Box::new(left), Box::new(self.and(depth)?));
        }
        Some(left)
    }

    fn and(&mut self, depth: usize) -> Option<Expr> {
        let mut left = self.unary(depth)?;
        while self.peek() == Some(&Token::And) {
            self.at += 1;
            left = Expr::And(Box::new(left), Box::new(self.unary(depth)?));
        }
        Some(left)
    }

    fn unary(&mut self, depth: usize) -> Option<Expr> {
        if depth >= MAX_DEPTH {
            return None;
        }
        match self.next()? {
            Token::Not => Some(Expr::Not(Box::new(self.unary(depth + 1)?))),
            Token::Open => {
                let inner = self.or(depth + 1)?;
                (self.next()? == Token::Close).then_some(inner)
            }
            token => {
                let left = atom(token)?;
                if let Some(Token::Cmp(op)) = self.peek().cloned() {
                    self.at += 1;
                    let right = atom(self.next()?)?;
                    return Some(Expr::Compare(op, Box::new(left), Box::new(right)));
                }
                Some(left)
            }
        }
    }
}

fn atom(token: Token) -> Option<Expr> {
    match token {
        Token::Word(w) => Some(Expr::Symbol(w)),
        Token::Text(t) => Some(Expr::Text(t)),
        Token::Macro(m) => Some(Expr::Macro(m)),
        _ => None,
    }
}

/// A symbol's value as Kconfig compares it: `y`, `m`, `n`, or the string or number.
fn value_text(name: &str, config: &KernelConfig) -> String {
    if matches!(name, "y" | "m" | "n") || name.bytes().all(|b| b.is_ascii_digit()) {
        return name.to_string();
    }
    match config.state(&format!("CONFIG_{name}")) {
        State::Set(Value::Str(s)) => s.clone(),
        State::Set(value) => value.to_string(),
        State::NotSet | State::Absent => "n".to_string(),
    }
}

fn tristate(text: &str) -> u8 {
    match text {
        "y" => 2,
        "m" => 1,
        _ => 0,
    }
}

impl Expr {
    /// Kconfig's value of the expression: 0 (n), 1 (m) or 2 (y). Macros count as 2.
    pub(crate) fn eval(&self, config: &KernelConfig) -> u8 {
        match self {
            Expr::Symbol(name) => tristate(&value_text(name, config)),
            Expr::Text(text) => tristate(text),
            Expr::Macro(_) => 2,
            Expr::Not(e) => 2 - e.eval(config),
            Expr::And(a, b) => a.eval(config).min(b.eval(config)),
            Expr::Or(a, b) => a.eval(config).max(b.eval(config)),
            Expr::Compare(op, a, b) => {
                let (Some(a), Some(b)) = (a.compare_text(config), b.compare_text(config)) else {
                    return 2;
                };
                let order = match (a.parse::<i128>(), b.parse::<i128>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    _ => a.cmp(&b),
                };
                let holds = match op {
                    Cmp::Eq => order.is_eq(),
                    Cmp::Ne => order.is_ne(),
                    Cmp::Lt => order.is_lt(),
                    Cmp::Le => order.is_le(),
                    Cmp::Gt => order.is_gt(),
                    Cmp::Ge => order.is_ge(),
                };
                if holds { 2 } else { 0 }
            }
        }
    }

    fn compare_text(&self, config: &KernelConfig) -> Option<String> {
        match self {
            Expr::Symbol(name) => Some(value_text(name, config)),
            Expr::Text(text) => Some(text.clone()),
            _ => None,
        }
    }

    /// The top-level `&&` operands, in order (`A && (B || C)` gives `A`, `B || C`).
    pub(crate) fn conjuncts(&self) -> Vec<&Expr> {
        match self {
            Expr::And(a, b) => {
                let mut all = a.conjuncts();
                all.extend(b.conjuncts());
                all
            }
            other => vec![other],
        }
    }

    /// Every symbol the expression reads (constants and numbers left out), in order, once.
    pub(crate) fn symbols(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        self.collect_symbols(&mut out);
        out
    }

    fn collect_symbols<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Symbol(name) => {
                let constant = matches!(name.as_str(), "y" | "m" | "n")
                    || name.bytes().all(|b| b.is_ascii_digit());
                if !constant && !out.contains(&name.as_str()) {
                    out.push(name);
                }
            }
            Expr::Text(_) | Expr::Macro(_) => {}
            Expr::Not(e) => e.collect_symbols(out),
            Expr::And(a, b) | Expr::Or(a, b) | Expr::Compare(_, a, b) => {
                a.collect_symbols(out);
                b.collect_symbols(out);
            }
        }
    }

    /// The plain symbol when the expression is just one (`EXPERT`), for fix hints.
    pub(crate) fn as_symbol(&self) -> Option<&str> {
        match self {
            Expr::Symbol(name) if !matches!(name.as_str(), "y" | "m" | "n") => Some(name),
            _ => None,
        }
    }

    /// The expression written back the way Kconfig files write it.
    pub(crate) fn to_text(&self) -> String {
        self.write(0)
    }

    /// `level`: 0 top, 1 inside `||`, 2 inside `&&`, 3 operand of `!` or a comparison.
    fn write(&self, level: u8) -> String {
        let wrap = |text: String, own: u8| if level > own { format!("({text})") } else { text };
        match self {
            Expr::Symbol(name) => name.clone(),
            Expr::Text(text) => format!("\"{text}\""),
            Expr::Macro(m) => m.clone(),
            Expr::Not(e) => format!("!{}", e.write(3)),
            Expr::Or(a, b) => wrap(format!("{} || {}", a.write(1), b.write(1)), 1),
            Expr::And(a, b) => wrap(format!("{} && {}", a.write(2), b.write(2)), 2),
            Expr::Compare(op, a, b) => {
                let op = match op {
                    Cmp::Eq => "=",
                    Cmp::Ne => "!=",
                    Cmp::Lt => "<",
                    Cmp::Le => "<=",
                    Cmp::Gt => ">",
                    Cmp::Ge => ">=",
                };
                wrap(format!("{} {op} {}", a.write(3), b.write(3)), 2)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> KernelConfig {
        KernelConfig::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn tristate_logic_follows_kconfig() {
        let c = config(
            "CONFIG_A=y\nCONFIG_M=m\n# CONFIG_N is not set\nCONFIG_S=\"abc\"\nCONFIG_I=42\n",
        );
        let eval = |text: &str| parse(text).unwrap_or_else(|| panic!("{text}")).eval(&c);
        assert_eq!(eval("A && M"), 1);
        assert_eq!(eval("A || N"), 2);
        assert_eq!(eval("!M"), 1);
        assert_eq!(eval("!(A && ABSENT)"), 2);
        assert_eq!(eval("S = \"abc\""), 2);
        assert_eq!(eval("I >= 40 && I < 43"), 2);
        assert_eq!(eval("M = y"), 0);
        assert_eq!(eval("N != y"), 2);
        assert_eq!(eval("$(cc-option,-mbranch-protection=pac-ret) && A"), 2);
        assert_eq!(eval("m"), 1);
    }

    #[test]
    fn conjuncts_symbols_and_text_round_trip() {
        let e = parse("EXPERT && (A || !B) && C != \"x\"").unwrap();
        let parts: Vec<String> = e.conjuncts().iter().map(|c| c.to_text()).collect();
        assert_eq!(parts, ["EXPERT", "A || !B", "C != \"x\""]);
        assert_eq!(e.symbols(), ["EXPERT", "A", "B", "C"]);
        assert_eq!(e.to_text(), "EXPERT && (A || !B) && C != \"x\"");
        assert_eq!(parse("!(A || B)").unwrap().to_text(), "!(A || B)");
        assert_eq!(parse("EXPERT").unwrap().as_symbol(), Some("EXPERT"));
    }

    #[test]
    fn malformed_or_too_deep_input_is_refused() {
        for bad in ["", "A &&", "(A", "A)", "A B", "\"open", "$(x", "A @ B", "&& A"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        let deep = format!("{}A{}", "(".repeat(MAX_DEPTH + 1), ")".repeat(MAX_DEPTH + 1));
        assert_eq!(parse(&deep), None);
        assert_eq!(parse(&"!".repeat(100_000)), None);
        assert_eq!(parse(&vec!["A"; 5_000].join(" && ")), None);
        let fine = format!("{}A{}", "(".repeat(10), ")".repeat(10));
        assert!(parse(&fine).is_some());
    }
}
