//! GitHub Actions expressions (`${{ … }}` and `if:`): the operators, functions and coercions the shipped workflows use.
//!
//! Values are JSON. Comparison follows GitHub's rules: strings compare case-insensitively,
//! values of different types are compared as numbers, and `&&`/`||` return an operand,
//! not a boolean (so `a && 'x' || ''` picks a string).

use serde_json::Value;

/// What an expression may read: `github`, `inputs`, `needs`, `steps`, `secrets`, …
pub trait Context {
    /// The value of a top-level name (`github`, `steps`, …); `Null` when unknown.
    fn lookup(&self, name: &str) -> Value;
    /// The status functions: `success()`, `failure()`, `cancelled()`, `always()`.
    fn status(&self, function: &str) -> bool;
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
    Num(f64),
    Op(&'static str),
}

/// Why an expression could not be read: a workflow bug, reported with the text.
#[derive(Debug, thiserror::Error)]
#[error("expression `{text}`: {why}")]
pub struct ExprError {
    pub text: String,
    pub why: String,
}

fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err("unterminated string".into()),
                    Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                        s.push('\'');
                        i += 2;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(ch) => {
                        s.push(*ch);
                        i += 1;
                    }
                }
            }
            out.push(Token::Str(s));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            let s: String = chars[start..i].iter().collect();
            out.push(Token::Num(
                s.parse().map_err(|_| format!("bad number {s}"))?,
            ));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '-')
            {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let op = match two.as_str() {
                "==" => Some("=="),
                "!=" => Some("!="),
                "<=" => Some("<="),
                ">=" => Some(">="),
                "&&" => Some("&&"),
                "||" => Some("||"),
                _ => None,
            };
            if let Some(op) = op {
                out.push(Token::Op(op));
                i += 2;
                continue;
            }
            let op = match c {
                '!' => "!",
                '<' => "<",
                '>' => ">",
                '(' => "(",
                ')' => ")",
                '[' => "[",
                ']' => "]",
                '.' => ".",
                ',' => ",",
                '*' => "*",
                other => return Err(format!("unexpected character {other:?}")),
            };
            out.push(Token::Op(op));
            i += 1;
        }
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: Vec<Token>,
    at: usize,
    cx: &'a dyn Context,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Token::Op(o)) if *o == op) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Result<Value, String> {
        let mut left = self.and()?;
        while self.eat("||") {
            let right = self.and()?;
            left = if truthy(&left) { left } else { right };
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Value, String> {
        let mut left = self.compare()?;
        while self.eat("&&") {
            let right = self.compare()?;
            left = if truthy(&left) { right } else { left };
        }
        Ok(left)
    }

    fn compare(&mut self) -> Result<Value, String> {
        let left = self.unary()?;
        for op in ["==", "!=", "<=", ">=", "<", ">"] {
            if self.eat(op) {
                let right = self.unary()?;
                let result = match op {
                    "==" => equal(&left, &right),
                    "!=" => !equal(&left, &right),
                    _ => {
                        let (a, b) = (number(&left), number(&right));
                        match op {
                            "<=" => a <= b,
                            ">=" => a >= b,
                            "<" => a < b,
                            _ => a > b,
                        }
                    }
                };
                return Ok(Value::Bool(result));
            }
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Value, String> {
        if self.eat("!") {
            let v = self.unary()?;
            return Ok(Value::Bool(!truthy(&v)));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Value, String> {
        let mut value = self.primary()?;
        loop {
            if self.eat(".") {
                match self.tokens.get(self.at).cloned() {
                    Some(Token::Ident(name)) => {
                        self.at += 1;
                        value = member(&value, &name);
                    }
                    Some(Token::Op("*")) => {
                        self.at += 1;
                        value = match value {
                            Value::Object(map) => {
                                Value::Array(map.into_iter().map(|(_, v)| v).collect())
                            }
                            other => other,
                        };
                    }
                    other => return Err(format!("a name after `.`, found {other:?}")),
                }
            } else if self.eat("[") {
                let index = self.or()?;
                if !self.eat("]") {
                    return Err("missing `]`".into());
                }
                value = match (&value, &index) {
                    (Value::Array(items), _) => items
                        .get(number(&index) as usize)
                        .cloned()
                        .unwrap_or(Value::Null),
                    _ => member(&value, &text(&index)),
                };
            } else {
                return Ok(value);
            }
        }
    }

    fn primary(&mut self) -> Result<Value, String> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        match token {
            Some(Token::Str(s)) => Ok(Value::String(s)),
            Some(Token::Num(n)) => Ok(serde_json::json!(n)),
            Some(Token::Op("(")) => {
                let v = self.or()?;
                if !self.eat(")") {
                    return Err("missing `)`".into());
                }
                Ok(v)
            }
            Some(Token::Ident(name)) => {
                if self.eat("(") {
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.or()?);
                            if self.eat(")") {
                                break;
                            }
                            if !self.eat(",") {
                                return Err(format!("`,` or `)` in the call of {name}"));
                            }
                        }
                    }
                    return self.call(&name, &args);
                }
                Ok(match name.as_str() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "null" => Value::Null,
                    _ => self.cx.lookup(&name),
                })
            }
            other => Err(format!("unexpected {other:?}")),
        }
    }

    fn call(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
        let lower = name.to_ascii_lowercase();
        Ok(match lower.as_str() {
            "success" | "failure" | "cancelled" | "always" => Value::Bool(self.cx.status(&lower)),
            "contains" => Value::Bool(match arg(0) {
                Value::Array(items) => items.iter().any(|i| equal(i, &arg(1))),
                other => text(&other)
                    .to_lowercase()
                    .contains(&text(&arg(1)).to_lowercase()),
            }),
            "startswith" => Value::Bool(
                text(&arg(0))
                    .to_lowercase()
                    .starts_with(&text(&arg(1)).to_lowercase()),
            ),
            "endswith" => Value::Bool(
                text(&arg(0))
                    .to_lowercase()
                    .ends_with(&text(&arg(1)).to_lowercase()),
            ),
            "format" => {
                let mut out = text(&arg(0));
                for (i, a) in args.iter().enumerate().skip(1) {
                    out = out.replace(&format!("{{{}}}", i - 1), &text(a));
                }
                Value::String(out)
            }
            "join" => {
                let sep = if args.len() > 1 {
                    text(&arg(1))
                } else {
                    ",".into()
                };
                match arg(0) {
                    Value::Array(items) => {
                        Value::String(items.iter().map(text).collect::<Vec<_>>().join(&sep))
                    }
                    other => Value::String(text(&other)),
                }
            }
            "fromjson" => {
                serde_json::from_str(&text(&arg(0))).map_err(|e| format!("fromJSON: {e}"))?
            }
            "tojson" => {
                Value::String(serde_json::to_string_pretty(&arg(0)).map_err(|e| e.to_string())?)
            }
            _ => return Err(format!("unknown function {name}")),
        })
    }
}

fn member(value: &Value, name: &str) -> Value {
    match value {
        Value::Object(map) => map
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
            .unwrap_or(Value::Null),
        Value::Array(items) => Value::Array(items.iter().map(|i| member(i, name)).collect()),
        _ => Value::Null,
    }
}

/// GitHub's truthiness: false, 0, -0, '', null and NaN are false.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

fn number(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) if s.trim().is_empty() => 0.0,
        Value::String(s) => s.trim().parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.eq_ignore_ascii_case(y),
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => a == b,
        _ => number(a) == number(b),
    }
}

/// A value as it lands in a string: numbers without a trailing `.0`, null as ''.
pub fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// Evaluates one expression (the inside of `${{ }}`, or an `if:`).
pub fn eval(text: &str, cx: &dyn Context) -> Result<Value, ExprError> {
    let fail = |why: String| ExprError {
        text: text.to_owned(),
        why,
    };
    let tokens = tokens(text).map_err(fail)?;
    let mut parser = Parser { tokens, at: 0, cx };
    let value = parser.or().map_err(fail)?;
    if parser.at != parser.tokens.len() {
        return Err(fail(format!("trailing {:?}", parser.peek())));
    }
    Ok(value)
}

/// An `if:` condition: `${{ }}` optional; a condition without a status function gets
/// GitHub's implicit `success() && (…)`.
pub fn condition(raw: &str, cx: &dyn Context) -> Result<bool, ExprError> {
    let trimmed = raw.trim();
    let inner = trimmed
        .strip_prefix("${{")
        .and_then(|s| s.strip_suffix("}}"))
        .unwrap_or(trimmed);
    let lower = inner.to_ascii_lowercase();
    let has_status = ["success(", "failure(", "cancelled(", "always("]
        .iter()
        .any(|f| lower.contains(f));
    if !has_status && !cx.status("success") {
        return Ok(false);
    }
    Ok(truthy(&eval(inner, cx)?))
}

/// Replaces every `${{ … }}` in `template` with its value as text.
pub fn interpolate(template: &str, cx: &dyn Context) -> Result<String, ExprError> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 3..];
        let end = after.find("}}").ok_or_else(|| ExprError {
            text: template.to_owned(),
            why: "`${{` without `}}`".into(),
        })?;
        out.push_str(&text(&eval(&after[..end], cx)?));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Cx(Value, bool);
    impl Context for Cx {
        fn lookup(&self, name: &str) -> Value {
            self.0[name].clone()
        }
        fn status(&self, f: &str) -> bool {
            match f {
                "always" => true,
                "success" => self.1,
                "failure" => !self.1,
                _ => false,
            }
        }
    }

    fn cx() -> Cx {
        Cx(
            json!({
                "needs": {"brief": {"outputs": {"status": "planned", "model": ""}, "result": "success"}},
                "github": {"event_name": "issue_comment", "event": {"comment": {"body": "hi\n/plan x", "user": {"login": "octo[bot]"}}}},
                "inputs": {"agent": "claude", "step": "S1"}
            }),
            true,
        )
    }

    #[test]
    fn operators_functions_and_coercions_read_as_github_reads_them() {
        let c = cx();
        let t = |e: &str| eval(e, &c).expect(e);
        assert_eq!(t("needs.brief.outputs.status == 'PLANNED'"), json!(true));
        assert_eq!(t("inputs.agent != 'codex' && inputs.step"), json!("S1"));
        assert_eq!(
            t("needs.brief.outputs.model != '' && format('--model {0}', needs.brief.outputs.model) || ''"),
            json!("")
        );
        assert_eq!(
            t("contains(github.event.comment.body, fromJSON('\"\\n/\"'))"),
            json!(true)
        );
        assert_eq!(
            t("!endsWith(github.event.comment.user.login, '[bot]')"),
            json!(false)
        );
        assert_eq!(t("github.event.missing.deeper"), Value::Null);
        assert_eq!(t("1 == '1'"), json!(true));
        assert!(eval("inputs.step ==", &c).is_err());
        assert!(eval("nosuch(1)", &c).is_err());
    }

    #[test]
    fn a_condition_without_a_status_function_needs_success_first() {
        let failed = Cx(json!({"x": "1"}), false);
        assert!(!condition("x == '1'", &failed).expect("if"));
        assert!(condition("always() && x == '1'", &failed).expect("if"));
        assert!(condition("${{ x == '1' }}", &cx()).is_ok());
        assert_eq!(
            interpolate("a ${{ inputs.step }} b ${{ needs.brief.result }}", &cx()).expect("t"),
            "a S1 b success"
        );
    }
}
