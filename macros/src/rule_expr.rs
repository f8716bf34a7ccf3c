//! `validation = <expression>`: a CEL rule as a string, or kube-derive's builder expression
//! `Rule::new("...").message("...").reason(Reason::FieldValueForbidden).field_path("...")`,
//! read at compile time (kinform has no runtime `Rule` type: the rule goes into the CRD).
//! `message` also takes `Message::Expression("...")` (a `messageExpression`) and
//! `Message::Message("...")`.

use syn::spanned::Spanned;
use syn::{Expr, Lit};

/// One CEL rule.
pub struct Rule {
    pub rule: String,
    pub message: Option<String>,
    pub message_expression: Option<String>,
    pub reason: Option<String>,
    pub field_path: Option<String>,
    pub optional_old_self: Option<bool>,
}

const REASONS: &[&str] = &[
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

fn shape_error(e: &impl Spanned) -> syn::Error {
    syn::Error::new(
        e.span(),
        "`validation` takes a CEL string or `Rule::new(\"...\")` with `.message(..)`, `.reason(Reason::..)`, `.field_path(..)`, `.optional_old_self(..)`",
    )
}

fn string(e: &Expr) -> syn::Result<String> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Str(s) => Ok(s.value()),
            _ => Err(syn::Error::new(l.span(), "expected a string literal")),
        },
        Expr::Group(g) => string(&g.expr),
        _ => Err(syn::Error::new(e.span(), "expected a string literal")),
    }
}

/// The last path segment and the single argument of `X::Y(arg)`.
fn variant_call(e: &Expr) -> Option<(String, &Expr)> {
    let Expr::Call(call) = e else { return None };
    let Expr::Path(p) = &*call.func else {
        return None;
    };
    let last = p.path.segments.last()?.ident.to_string();
    match call.args.iter().collect::<Vec<_>>()[..] {
        [arg] => Some((last, arg)),
        _ => None,
    }
}

/// Reads a `validation = ...` expression.
pub fn rule(e: &Expr) -> syn::Result<Rule> {
    let mut r = Rule {
        rule: String::new(),
        message: None,
        message_expression: None,
        reason: None,
        field_path: None,
        optional_old_self: None,
    };
    if let Ok(s) = string(e) {
        r.rule = s;
        return Ok(r);
    }
    // Unwind the method chain: calls from last to first, then `Rule::new(..)`.
    let mut calls = Vec::new();
    let mut cur = e;
    while let Expr::MethodCall(m) = cur {
        calls.push(m);
        cur = &m.receiver;
    }
    match variant_call(cur) {
        Some((name, arg)) if name == "new" => r.rule = string(arg)?,
        _ => return Err(shape_error(cur)),
    }
    for m in calls.into_iter().rev() {
        let [arg] = m.args.iter().collect::<Vec<_>>()[..] else {
            return Err(shape_error(m));
        };
        match m.method.to_string().as_str() {
            "message" => match variant_call(arg) {
                Some((v, inner)) if v == "Expression" => {
                    r.message_expression = Some(string(inner)?);
                }
                Some((v, inner)) if v == "Message" => r.message = Some(string(inner)?),
                _ => r.message = Some(string(arg)?),
            },
            "reason" => {
                let name = match arg {
                    Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                    _ => string(arg).ok(),
                };
                match name {
                    Some(n) if REASONS.contains(&n.as_str()) => r.reason = Some(n),
                    _ => {
                        return Err(syn::Error::new(
                            arg.span(),
                            format!("`reason` must be one of {REASONS:?}"),
                        ));
                    }
                }
            }
            "field_path" => r.field_path = Some(string(arg)?),
            "optional_old_self" => match arg {
                Expr::Lit(l) => match &l.lit {
                    Lit::Bool(b) => r.optional_old_self = Some(b.value),
                    _ => return Err(syn::Error::new(l.span(), "expected `true` or `false`")),
                },
                _ => return Err(syn::Error::new(arg.span(), "expected `true` or `false`")),
            },
            _ => return Err(shape_error(&m.method)),
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_expression() {
        let e: Expr = syn::parse_quote!(
            Rule::new("self.x > 0")
                .message(Message::Expression("'bad ' + self.x"))
                .reason(Reason::FieldValueForbidden)
                .field_path(".spec.x")
        );
        let r = rule(&e).unwrap();
        assert_eq!(r.rule, "self.x > 0");
        assert_eq!(r.message_expression.as_deref(), Some("'bad ' + self.x"));
        assert_eq!(r.message, None);
        assert_eq!(r.reason.as_deref(), Some("FieldValueForbidden"));
        assert_eq!(r.field_path.as_deref(), Some(".spec.x"));
        let e: Expr = syn::parse_quote!(Rule::new("a").message("m"));
        assert_eq!(rule(&e).unwrap().message.as_deref(), Some("m"));
        let e: Expr = syn::parse_quote!(Rule::new("a").reason(Reason::Nope));
        assert!(rule(&e).is_err());
        let e: Expr = syn::parse_quote!(Other::make("a"));
        assert!(rule(&e).is_err());
    }
}
