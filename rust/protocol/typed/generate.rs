//! The generator of the typed messages: reads each message's declaration (its table in
//! `rust/protocol/messages/`) and writes `rust/protocol/typed/<module>.rs`, a Rust struct per
//! message and per nested struct with `read` and `write` straight from and to bytes.
//!
//! The tables stay the single source: the generic codec, the Python views and the direct
//! encoder read them at run time, the typed code is generated from them. The test
//! `generated_code_is_current` fails when a table and its generated code disagree; to write the
//! files again, run `make generate` (`KGROUP_GENERATE=1 cargo test --lib generated_code`).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::protocol::messages::{self, coordinator_records};
use crate::protocol::schema::{DefaultValue, Field, Message, Type, Versions};

/// Module is one generated file: its name and the messages it holds.
pub struct Module {
    pub name: &'static str,
    pub doc: String,
    pub messages: Vec<&'static Message>,
}

/// modules lists every generated file: one per API of `messages::APIS` and the coordinators'
/// record schemas.
pub fn modules() -> Vec<Module> {
    let mut out: Vec<Module> = messages::APIS
        .iter()
        .map(|a| Module {
            name: module_name(a.name),
            doc: format!(
                "{} (api key {}), v{}: the request and response declared in \
                 `rust/protocol/messages/{}.rs`.",
                a.name,
                a.key,
                a.versions(),
                module_name(a.name)
            ),
            messages: vec![a.request, a.response],
        })
        .collect();
    out.push(Module {
        name: "coordinator_records",
        doc: "The record schemas of the coordinators' internal topics, declared in \
              `rust/protocol/messages/coordinator_records.rs`."
            .into(),
        messages: coordinator_records::RECORDS.to_vec(),
    });
    out
}

/// module_name is an API's module: `JoinGroup` -> `join_group`.
fn module_name(api: &str) -> &'static str {
    let mut s = String::new();
    for (i, c) in api.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                s.push('_');
            }
            s.push(c.to_ascii_lowercase());
        } else {
            s.push(c);
        }
    }
    Box::leak(s.into_boxed_str())
}

fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|p| {
            let mut c = p.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// singular names one element of an array field, as Kafka names its structs (`topics` ->
/// `Topic`, `entries` -> `Entry`).
fn singular(name: &str) -> String {
    if let Some(stem) = name.strip_suffix("ies") {
        format!("{stem}y")
    } else if name.ends_with("sses") || name.ends_with("xes") || name.ends_with("ches") {
        name[..name.len() - 2].to_string()
    } else if name.ends_with('s') && !name.ends_with("ss") {
        name[..name.len() - 1].to_string()
    } else {
        name.to_string()
    }
}

const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while",
    "async", "await", "dyn",
];

fn ident(name: &str) -> String {
    if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

/// Def is one struct to generate.
struct Def {
    name: String,
    fields: &'static [Field],
    /// top is the message, for a message's own struct.
    top: Option<&'static Message>,
    /// path is where it sits in the message, for its doc comment.
    path: String,
}

struct Gen<'m> {
    msg: &'m Message,
    defs: Vec<Def>,
    /// names maps a struct's name to its fields, to tell a reuse from a clash.
    names: HashMap<String, *const [Field]>,
    /// of maps a struct field (by its fields' address) to the struct's name.
    of: HashMap<*const [Field], String>,
}

impl Gen<'_> {
    fn collect(&mut self, fields: &'static [Field], parent: &str, path: &str) {
        for f in fields {
            let is_struct = matches!(f.ty, Type::Struct | Type::Array(Type::Struct));
            if !is_struct {
                continue;
            }
            let key = f.fields as *const [Field];
            if self.of.contains_key(&key) {
                continue;
            }
            let stem = match f.ty {
                Type::Array(_) => singular(f.name),
                _ => f.name.to_string(),
            };
            let mut name = format!("{}{}", self.msg.name, camel(&stem));
            if self
                .names
                .get(&name)
                .is_some_and(|k| !std::ptr::addr_eq(*k, key))
            {
                name = format!("{parent}{}", camel(&stem));
            }
            assert!(
                self.names
                    .get(&name)
                    .is_none_or(|k| std::ptr::addr_eq(*k, key)),
                "two structs named {name}"
            );
            self.names.insert(name.clone(), key);
            self.of.insert(key, name.clone());
            let sub = format!("{path}.{}", f.name);
            self.defs.push(Def {
                name: name.clone(),
                fields: f.fields,
                top: None,
                path: sub.clone(),
            });
            self.collect(f.fields, &name, &sub);
        }
    }
}

/// borrows tells whether a struct's Rust type needs a lifetime.
fn borrows(fields: &'static [Field], flexible: bool) -> bool {
    flexible
        || fields.iter().any(|f| match f.ty {
            Type::String | Type::Bytes | Type::Records => true,
            Type::Array(Type::String) => true,
            Type::Struct | Type::Array(Type::Struct) => borrows(f.fields, flexible),
            _ => false,
        })
}

/// Ctx is what the code of one message needs to know.
struct Ctx<'g> {
    msg: &'g Message,
    of: &'g HashMap<*const [Field], String>,
    flexible_ever: bool,
}

impl Ctx<'_> {
    fn struct_name(&self, f: &Field) -> String {
        self.of[&(f.fields as *const [Field])].clone()
    }

    fn struct_type(&self, f: &Field) -> String {
        let name = self.struct_name(f);
        if borrows(f.fields, self.flexible_ever) {
            format!("{name}<'a>")
        } else {
            name
        }
    }

    fn nullable(&self, f: &Field) -> bool {
        !f.nullable.is_empty()
    }

    /// base is a field's type without the Option of a nullable one.
    fn base(&self, f: &Field) -> String {
        match f.ty {
            Type::Array(t) => format!("Vec<{}>", self.scalar_or_struct(f, *t)),
            t => self.scalar_or_struct(f, t),
        }
    }

    fn scalar_or_struct(&self, f: &Field, t: Type) -> String {
        match t {
            Type::Bool => "bool".into(),
            Type::Int8 => "i8".into(),
            Type::Int16 => "i16".into(),
            Type::Int32 => "i32".into(),
            Type::Int64 => "i64".into(),
            Type::Uint16 => "u16".into(),
            Type::Float64 => "f64".into(),
            Type::Uuid => "[u8; 16]".into(),
            Type::String => "Cow<'a, str>".into(),
            Type::Bytes | Type::Records => "Cow<'a, [u8]>".into(),
            Type::Struct => self.struct_type(f),
            Type::Array(_) => unreachable!("arrays of arrays are not in Kafka's specs"),
        }
    }

    fn rust_type(&self, f: &Field) -> String {
        if self.nullable(f) {
            format!("Option<{}>", self.base(f))
        } else {
            self.base(f)
        }
    }

    /// default is a field's default value as a Rust expression.
    fn default(&self, f: &Field) -> String {
        let int_suffix = |t: Type| match t {
            Type::Uint16 => "u16",
            Type::Int8 => "i8",
            Type::Int16 => "i16",
            Type::Int32 => "i32",
            _ => "i64",
        };
        let base = match (f.default, f.ty) {
            (DefaultValue::Null, _) => return "None".into(),
            (DefaultValue::Int(n), t) => format!("{n}{}", int_suffix(t)),
            (DefaultValue::Bool(b), _) => b.to_string(),
            (DefaultValue::Float(x), _) => format!("{x:?}f64"),
            (DefaultValue::Str(s), _) => format!("Cow::Borrowed({s:?})"),
            (DefaultValue::Zero, t) => match t {
                Type::Bool => "false".into(),
                Type::Int8 | Type::Int16 | Type::Int32 | Type::Int64 | Type::Uint16 => {
                    format!("0{}", int_suffix(t))
                }
                Type::Float64 => "0.0f64".into(),
                Type::Uuid => "[0u8; 16]".into(),
                Type::String => "Cow::Borrowed(\"\")".into(),
                Type::Bytes | Type::Records => "Cow::Borrowed(&[])".into(),
                Type::Array(_) => "Vec::new()".into(),
                Type::Struct => format!("{}::default()", self.struct_name(f)),
            },
        };
        if self.nullable(f) {
            format!("Some({base})")
        } else {
            base
        }
    }

    /// is_default is a Rust expression telling whether `self.<field>` holds its default.
    fn is_default(&self, f: &Field, value: &str) -> String {
        let opt = self.nullable(f);
        match (f.default, f.ty) {
            (DefaultValue::Null, _) => format!("{value}.is_none()"),
            (DefaultValue::Float(x), _) if !opt => {
                format!("{value}.to_bits() == {x:?}f64.to_bits()")
            }
            (DefaultValue::Zero, Type::Float64) if !opt => format!("{value}.to_bits() == 0"),
            (DefaultValue::Zero, Type::Array(_)) if !opt => format!("{value}.is_empty()"),
            (DefaultValue::Zero, Type::Array(_)) => {
                format!("{value}.as_ref().is_some_and(|a| a.is_empty())")
            }
            (DefaultValue::Zero, Type::String | Type::Bytes | Type::Records) if !opt => {
                format!("{value}.is_empty()")
            }
            (DefaultValue::Zero, Type::String | Type::Bytes | Type::Records) => {
                format!("{value}.as_ref().is_some_and(|a| a.is_empty())")
            }
            (DefaultValue::Zero, Type::Bool) if !opt => format!("!{value}"),
            (DefaultValue::Zero, Type::Struct) if !opt => {
                format!("{value} == {}::default()", self.struct_name(f))
            }
            (DefaultValue::Str(s), _) if opt => format!("{value}.as_deref() == Some({s:?})"),
            (DefaultValue::Str(s), _) => format!("{value} == {s:?}"),
            _ => format!("{value} == {}", self.default(f)),
        }
    }
}

/// cond is a Rust condition on `v` for `vs`, or None when it holds at every version of `all`.
fn cond(vs: Versions, all: Versions) -> Option<String> {
    if vs.is_empty() || vs.lo > all.hi || vs.hi < all.lo {
        return Some("false".into());
    }
    let lo = vs.lo.max(all.lo);
    let hi = vs.hi.min(all.hi);
    match (lo > all.lo, hi < all.hi) {
        (false, false) => None,
        (true, false) => Some(format!("v >= {lo}")),
        (false, true) => Some(format!("v <= {hi}")),
        (true, true) if lo == hi => Some(format!("v == {lo}")),
        (true, true) => Some(format!("({lo}..={hi}).contains(&v)")),
    }
}

fn cond_or_true(vs: Versions, all: Versions) -> String {
    cond(vs, all).unwrap_or_else(|| "true".into())
}

impl Ctx<'_> {
    /// flex is the encoding a field uses: its own override, else the message's.
    fn flex(&self, f: &Field) -> String {
        match f.flexible {
            Some(vs) => cond_or_true(vs, self.msg.valid),
            None => "flex".into(),
        }
    }

    /// read is an expression of type `Result<T>` reading one field's value from `r`.
    fn read(&self, f: &Field) -> String {
        let flex = self.flex(f);
        let nullable = cond_or_true(f.nullable, f.versions);
        let opt = self.nullable(f);
        match f.ty {
            Type::Array(elem) => {
                let (min, item) = match *elem {
                    Type::Struct => {
                        let n = self.struct_name(f);
                        (
                            format!("{n}::min_size(v, flex)"),
                            format!("|r| {n}::read_in(r, v, flex)"),
                        )
                    }
                    t => (min_of(t, &flex), self.read_scalar(t, &flex, "false")),
                };
                let item = if matches!(*elem, Type::Struct) {
                    item
                } else {
                    format!("|r| {item}")
                };
                if opt {
                    format!("get_opt_array(r, {flex}, {nullable}, {min}, {item})")
                } else {
                    format!("get_array(r, {flex}, {min}, {item})")
                }
            }
            Type::Struct if opt => format!(
                "get_opt_struct(r, {nullable}, |r| {}::read_in(r, v, flex))",
                self.struct_name(f)
            ),
            Type::Struct => format!("{}::read_in(r, v, flex)", self.struct_name(f)),
            Type::String if opt => format!("get_opt_str(r, {flex}, {nullable})"),
            Type::Bytes | Type::Records if opt => format!("get_opt_bytes(r, {flex}, {nullable})"),
            t => self.read_scalar(t, &flex, "false"),
        }
    }

    fn read_scalar(&self, t: Type, flex: &str, _nullable: &str) -> String {
        match t {
            Type::Bool => "r.boolean()".into(),
            Type::Int8 => "r.i8()".into(),
            Type::Int16 => "r.i16()".into(),
            Type::Int32 => "r.i32()".into(),
            Type::Int64 => "r.i64()".into(),
            Type::Uint16 => "r.u16()".into(),
            Type::Float64 => "r.f64()".into(),
            Type::Uuid => "r.uuid()".into(),
            Type::String => format!("get_str(r, {flex})"),
            Type::Bytes | Type::Records => format!("get_bytes(r, {flex})"),
            _ => unreachable!(),
        }
    }

    /// write is a statement writing `value` (an expression of the field's type) with writer
    /// `w`, returning early with the error.
    fn write(&self, f: &Field, value: &str, w: &str) -> String {
        let flex = self.flex(f);
        let nullable = cond_or_true(f.nullable, f.versions);
        let opt = self.nullable(f);
        let e = |call: String| format!("{call}.map_err(|e| at(e, {:?}))?;", f.name);
        match f.ty {
            Type::Array(elem) => {
                let item = match *elem {
                    Type::Struct => "|w, x| x.write_in(w, v, flex)".to_string(),
                    t => format!(
                        "|w, x| {{ {} Ok(()) }}",
                        self.write_scalar(t, "*x", &flex, "w")
                    ),
                };
                if opt {
                    e(format!(
                        "put_opt_array({w}, {value}.as_deref(), {flex}, {nullable}, v, {item})"
                    ))
                } else {
                    e(format!("put_array({w}, &{value}, {flex}, v, {item})"))
                }
            }
            Type::Struct if opt => e(format!(
                "put_opt_struct({w}, {value}.as_ref(), {nullable}, v, |w, x| x.write_in(w, v, flex))"
            )),
            Type::Struct => e(format!("{value}.write_in({w}, v, flex)")),
            Type::String if opt => e(format!(
                "put_opt_str({w}, {value}.as_deref(), {flex}, {nullable}, v)"
            )),
            Type::Bytes | Type::Records if opt => e(format!(
                "put_opt_bytes({w}, {value}.as_deref(), {flex}, {nullable}, v)"
            )),
            Type::String => e(format!("put_str({w}, &{value}, {flex})")),
            Type::Bytes | Type::Records => e(format!("put_bytes({w}, &{value}, {flex})")),
            t => self.write_scalar(t, value, &flex, w),
        }
    }

    /// write_scalar writes a fixed-size value (never fails) or a string or bytes (may fail:
    /// the caller's `?` applies).
    fn write_scalar(&self, t: Type, value: &str, flex: &str, w: &str) -> String {
        match t {
            Type::Bool => format!("{w}.boolean({value});"),
            Type::Int8 => format!("{w}.i8({value});"),
            Type::Int16 => format!("{w}.i16({value});"),
            Type::Int32 => format!("{w}.i32({value});"),
            Type::Int64 => format!("{w}.i64({value});"),
            Type::Uint16 => format!("{w}.u16({value});"),
            Type::Float64 => format!("{w}.f64({value});"),
            Type::Uuid => format!("{w}.uuid(&{value});"),
            Type::String => {
                format!("put_str({w}, &{}, {flex})?;", value.trim_start_matches('*'))
            }
            Type::Bytes | Type::Records => {
                format!(
                    "put_bytes({w}, &{}, {flex})?;",
                    value.trim_start_matches('*')
                )
            }
            _ => unreachable!(),
        }
    }
}

fn min_of(t: Type, flex: &str) -> String {
    match t {
        Type::Bool | Type::Int8 => "1".into(),
        Type::Int16 | Type::Uint16 => "2".into(),
        Type::Int32 => "4".into(),
        Type::Int64 | Type::Float64 => "8".into(),
        Type::Uuid => "16".into(),
        Type::String => format!("if {flex} {{ 1 }} else {{ 2 }}"),
        _ => format!("if {flex} {{ 1 }} else {{ 4 }}"),
    }
}

/// render is the whole generated file of a module.
pub fn render(m: &Module) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "//! {}\n//!\n//! Generated by `rust/protocol/typed/generate.rs` from the declarations; \
         do not edit.\n",
        m.doc
    );
    out.push_str(
        "#![allow(clippy::all, unused_imports, unused_variables, unused_mut)]\n\n\
         use std::borrow::Cow;\n\nuse super::support::*;\n\n",
    );
    for msg in &m.messages {
        render_message(&mut out, m, msg);
    }
    out
}

fn render_message(out: &mut String, m: &Module, msg: &'static Message) {
    let mut g = Gen {
        msg,
        defs: vec![Def {
            name: msg.name.to_string(),
            fields: msg.fields,
            top: Some(msg),
            path: msg.name.to_string(),
        }],
        names: HashMap::new(),
        of: HashMap::new(),
    };
    g.names
        .insert(msg.name.to_string(), msg.fields as *const [Field]);
    g.collect(msg.fields, msg.name, msg.name);
    let ctx = Ctx {
        msg,
        of: &g.of,
        flexible_ever: !msg.flexible.is_empty(),
    };
    let table = match m.name {
        "coordinator_records" => format!(
            "crate::protocol::messages::coordinator_records::{}",
            screaming(msg.name)
        ),
        module => format!(
            "crate::protocol::messages::{module}::{}",
            if msg.kind == crate::protocol::schema::Kind::Request {
                "REQUEST"
            } else {
                "RESPONSE"
            }
        ),
    };
    for d in &g.defs {
        render_struct(out, &ctx, d, &table);
    }
}

fn screaming(name: &str) -> String {
    module_name(name).to_ascii_uppercase()
}

fn render_struct(out: &mut String, ctx: &Ctx<'_>, d: &Def, table: &str) {
    let msg = ctx.msg;
    let flexible_ever = ctx.flexible_ever;
    let lt = borrows(d.fields, flexible_ever);
    let (gen, gen_a) = if lt { ("<'a>", "<'a>") } else { ("", "") };
    let all = msg.valid;
    // The struct.
    match d.top {
        Some(_) => {
            let _ = writeln!(out, "/// {} v{}.", msg.name, msg.valid);
        }
        None => {
            let _ = writeln!(out, "/// `{}`, one element.", d.path);
        }
    }
    let _ = writeln!(
        out,
        "#[derive(Debug, Clone, PartialEq)]\npub struct {}{gen} {{",
        d.name
    );
    for f in d.fields {
        let mut doc = format!("versions {}", f.versions);
        if !f.nullable.is_empty() {
            let _ = write!(doc, ", nullable {}", f.nullable);
        }
        if let Some(t) = f.tag {
            let _ = write!(doc, ", tag {t} in {}", f.tagged);
        }
        if f.ignorable {
            doc.push_str(", ignorable");
        }
        let _ = writeln!(out, "    /// {}: {doc}.", f.name);
        let _ = writeln!(out, "    pub {}: {},", ident(f.name), ctx.rust_type(f));
    }
    if flexible_ever {
        out.push_str(
            "    /// unknown_tagged are the tagged fields this declaration does not know, as read.\n",
        );
        out.push_str("    pub unknown_tagged: Unknown<'a>,\n");
    }
    out.push_str("}\n\n");

    // Default: every field at its declared default.
    let _ = writeln!(
        out,
        "impl{gen} Default for {}{gen_a} {{\n    fn default() -> Self {{\n        {} {{",
        d.name, d.name
    );
    for f in d.fields {
        let _ = writeln!(out, "            {}: {},", ident(f.name), ctx.default(f));
    }
    if flexible_ever {
        out.push_str("            unknown_tagged: Vec::new(),\n");
    }
    out.push_str("        }\n    }\n}\n\n");

    let _ = writeln!(out, "impl{gen} {}{gen_a} {{", d.name);
    if d.top.is_some() {
        let _ = writeln!(
            out,
            "    /// MESSAGE is the declaration this struct is generated from.\n    \
             pub const MESSAGE: &'static Message = &{table};\n"
        );
        let la = if lt { "'a" } else { "'_" };
        let _ = writeln!(
            out,
            "    /// decode reads a whole body at `version`; every byte must be used.\n    \
             pub fn decode(buf: &{la2} [u8], version: i16) -> Result<Self> {{\n        \
             let mut r = Reader::new(buf);\n        let s = Self::read(&mut r, version)?;\n        \
             left_over(&r, Self::MESSAGE, version)?;\n        Ok(s)\n    }}\n\n    \
             /// read reads a body at `version` from `r`, leaving what follows.\n    \
             #[inline(always)]\n    \
             pub fn read(r: &mut Reader<{la}>, version: i16) -> Result<Self> {{\n        \
             check_version(Self::MESSAGE, version)?;\n        \
             Self::read_in(r, version, Self::MESSAGE.is_flexible(version))\n            \
             .map_err(|e| finish(e, Self::MESSAGE, version))\n    }}\n\n    \
             /// write writes the body at `version`.\n    \
             pub fn write<B: Buf>(&self, w: &mut Writer<B>, version: i16) -> Result<()> {{\n        \
             check_version(Self::MESSAGE, version)?;\n        \
             self.write_in(w, version, Self::MESSAGE.is_flexible(version))\n            \
             .map_err(|e| finish(e, Self::MESSAGE, version))\n    }}\n\n    \
             /// to_vec is the body at `version` as bytes.\n    \
             pub fn to_vec(&self, version: i16) -> Result<Vec<u8>> {{\n        \
             let mut w = Writer::new();\n        self.write(&mut w, version)?;\n        \
             Ok(w.into_inner())\n    }}\n",
            la2 = if lt { "'a" } else { "'_" },
        );
    }

    // min_size: the fewest bytes the struct takes at a version.
    let _ = writeln!(
        out,
        "    /// min_size is the fewest bytes this struct takes at version `v`.\n    \
         pub fn min_size(v: i16, flex: bool) -> usize {{\n        let mut n = flex as usize;"
    );
    for f in d.fields {
        let size = match f.ty {
            // A nullable struct may be its marker byte alone.
            Type::Struct if ctx.nullable(f) => format!(
                "if {} {{ 1 }} else {{ {}::min_size(v, flex) }}",
                cond_or_true(f.nullable, f.versions),
                ctx.struct_name(f)
            ),
            Type::Struct => format!("{}::min_size(v, flex)", ctx.struct_name(f)),
            Type::Array(_) => min_of(Type::Bytes, &ctx.flex(f)),
            t => min_of(t, &ctx.flex(f)),
        };
        let present = present(f, all);
        match present {
            None => {
                let _ = writeln!(out, "        n += {size};");
            }
            Some(c) => {
                let _ = writeln!(
                    out,
                    "        if {c} {{\n            n += {size};\n        }}"
                );
            }
        }
    }
    out.push_str("        n\n    }\n\n");

    // fit: fields the version lacks back at their default.
    let _ = writeln!(
        out,
        "    /// fit sets every field that version `v` lacks back to its default (in nested structs\n    \
         /// too), so that a value built for any version writes at `v`.\n    \
         pub fn fit(&mut self, v: i16) {{"
    );
    for f in d.fields {
        let name = ident(f.name);
        if let Some(c) = cond(f.versions, all) {
            let _ = writeln!(
                out,
                "        if !({c}) {{\n            self.{name} = {};\n        }}",
                ctx.default(f)
            );
        }
        let nested = match (f.ty, ctx.nullable(f)) {
            (Type::Struct, false) => Some(format!("self.{name}.fit(v);")),
            (Type::Struct, true) => Some(format!(
                "if let Some(x) = self.{name}.as_mut() {{\n            x.fit(v);\n        }}"
            )),
            (Type::Array(Type::Struct), false) => {
                Some(format!("for x in self.{name}.iter_mut() {{\n            x.fit(v);\n        }}"))
            }
            (Type::Array(Type::Struct), true) => Some(format!(
                "if let Some(xs) = self.{name}.as_mut() {{\n            for x in xs.iter_mut() {{\n                x.fit(v);\n            }}\n        }}"
            )),
            _ => None,
        };
        if let Some(n) = nested {
            let _ = writeln!(out, "        {n}");
        }
    }
    out.push_str("    }\n\n");

    // read_in
    let la = if lt { "'a" } else { "'_" };
    let _ = writeln!(
        out,
        "    /// read_in reads the struct's fields at version `v`.\n    \
         pub fn read_in(r: &mut Reader<{la}>, v: i16, flex: bool) -> Result<Self> {{"
    );
    // Each field into a local, then the struct at once: no default built and dropped.
    for f in d.fields {
        let local = format!("f_{}", f.name);
        let read = format!("{}.map_err(|e| at(e, {:?}))?", ctx.read(f), f.name);
        let mutable = if f.tag.is_some() { "mut " } else { "" };
        match present(f, all).as_deref() {
            None => {
                let _ = writeln!(out, "        let {mutable}{local} = {read};");
            }
            Some("false") => {
                let _ = writeln!(out, "        let {mutable}{local} = {};", ctx.default(f));
            }
            Some(c) => {
                let _ = writeln!(
                    out,
                    "        let {mutable}{local} = if {c} {{\n            {read}\n        }} else {{\n            {}\n        }};",
                    ctx.default(f)
                );
            }
        }
    }
    if flexible_ever {
        out.push_str("        let mut unknown_tagged = Vec::new();\n");
        let tagged: Vec<&Field> = d.fields.iter().filter(|f| f.tag.is_some()).collect();
        if tagged.is_empty() {
            out.push_str(
                "        if flex {\n            read_tagged(r, &mut unknown_tagged, |_, _| Ok(false))?;\n        }\n",
            );
        } else {
            out.push_str("        if flex {\n            read_tagged(r, &mut unknown_tagged, |tag, raw| {\n                let r = &mut Reader::new(raw);\n                match tag {\n");
            for f in &tagged {
                let c = [cond_or_true(f.versions, all), cond_or_true(f.tagged, all)];
                let _ = writeln!(
                    out,
                    "                    {} if {} => {{\n                        f_{} = {}.map_err(|e| at(e, {:?}))?;\n                        tagged_done(r, {}, {:?})?;\n                        Ok(true)\n                    }}",
                    f.tag.unwrap_or_default(),
                    c.join(" && "),
                    f.name,
                    ctx.read(f),
                    f.name,
                    f.tag.unwrap_or_default(),
                    f.name
                );
            }
            out.push_str("                    _ => Ok(false),\n                }\n            })?;\n        }\n");
        }
    }
    let _ = writeln!(out, "        Ok({} {{", d.name);
    for f in d.fields {
        let _ = writeln!(out, "            {}: f_{},", ident(f.name), f.name);
    }
    if flexible_ever {
        out.push_str("            unknown_tagged,\n");
    }
    out.push_str("        })\n    }\n\n");

    // write_in
    let _ = writeln!(
        out,
        "    /// write_in writes the struct's fields at version `v`.\n    \
         pub fn write_in<B: Buf>(&self, w: &mut Writer<B>, v: i16, flex: bool) -> Result<()> {{"
    );
    for f in d.fields {
        let value = format!("self.{}", ident(f.name));
        let write = ctx.write(f, &value, "w");
        match present(f, all) {
            None => {
                let _ = writeln!(out, "        {write}");
            }
            Some(c) => {
                let _ = writeln!(out, "        if {c} {{\n            {write}\n        }}");
            }
        }
        if let (Some(c), false) = (cond(f.versions, all), f.ignorable) {
            let _ = writeln!(
                out,
                "        if !({c}) && !({}) {{\n            return Err(absent(v, {:?}, {:?}));\n        }}",
                ctx.is_default(f, &value),
                f.name,
                f.versions.to_string()
            );
        }
    }
    if flexible_ever {
        let tagged: Vec<&Field> = d.fields.iter().filter(|f| f.tag.is_some()).collect();
        out.push_str("        if flex {\n");
        if tagged.is_empty() {
            out.push_str("            put_tagged(w, Vec::new(), &self.unknown_tagged)?;\n");
        } else {
            out.push_str("            let mut known = Vec::new();\n");
            for f in &tagged {
                let value = format!("self.{}", ident(f.name));
                let c = [cond_or_true(f.versions, all), cond_or_true(f.tagged, all)];
                let _ = writeln!(
                    out,
                    "            if {} && {} && !({}) {{\n                let mut t = Writer::new();\n                {{\n                    let w = &mut t;\n                    {}\n                }}\n                known.push(({}, t.into_inner()));\n            }}",
                    c[0],
                    c[1],
                    ctx.is_default(f, &value),
                    ctx.write(f, &value, "w"),
                    f.tag.unwrap_or_default()
                );
            }
            out.push_str("            put_tagged(w, known, &self.unknown_tagged)?;\n");
        }
        out.push_str("        } else if !self.unknown_tagged.is_empty() {\n            return Err(not_flexible(v));\n        }\n");
    }
    out.push_str("        Ok(())\n    }\n}\n\n");
}

/// present is the condition under which a field is read or written in the body (in its
/// versions and not tagged), or None when always.
fn present(f: &Field, all: Versions) -> Option<String> {
    let c1 = cond(f.versions, all);
    let c2 = match f.tag {
        Some(_) => match cond(f.tagged, all) {
            // Tagged at every version: never in the body.
            None => return Some("false".into()),
            Some(c) => Some(format!("!({c})")),
        },
        None => None,
    };
    match (c1, c2) {
        (None, None) => None,
        (Some(a), None) => Some(a),
        (None, Some(b)) => Some(b),
        (Some(a), Some(b)) => Some(format!("{a} && {b}")),
    }
}

/// render_mod is the generated `mod.rs`: the modules and `reencode`, which the property tests
/// and the fuzzer use to run any message through its typed code.
pub fn render_mod(mods: &[Module]) -> String {
    let mut out = String::from(
        "//! The typed messages: a Rust struct per message with decode straight from bytes and\n\
         //! encode straight to bytes, generated from the declarations of `rust/protocol/messages/`\n\
         //! by `generate.rs` (`make generate`). Do not edit the generated modules.\n\n",
    );
    out.push_str("#[cfg(test)]\nmod generate;\npub mod support;\n#[cfg(test)]\nmod tests;\n\n");
    for m in mods {
        let _ = writeln!(out, "pub mod {};", m.name);
    }
    out.push_str(
        "\n/// reencode decodes `bytes` as the message named `name` at `version` with its typed code\n\
         /// and encodes the result again.\n\
         #[cfg(any(test, feature = \"testing\"))]\n\
         pub fn reencode(\n    name: &str,\n    version: i16,\n    bytes: &[u8],\n) -> Option<crate::errors::Result<Vec<u8>>> {\n    \
         Some(match name {\n",
    );
    for m in mods {
        for msg in &m.messages {
            let _ = writeln!(
                out,
                "        {:?} => {}::{}::decode(bytes, version).and_then(|m| m.to_vec(version)),",
                msg.name, m.name, msg.name
            );
        }
    }
    out.push_str("        _ => return None,\n    })\n}\n");
    out
}

/// folder is `rust/protocol/typed/`.
pub fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("rust/protocol/typed")
}

/// rustfmt formats generated code as `cargo fmt` would.
pub fn rustfmt(code: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("rustfmt runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(code.as_bytes())
        .expect("rustfmt reads");
    let out = child.wait_with_output().expect("rustfmt finishes");
    assert!(out.status.success(), "rustfmt failed on generated code");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// files are every generated file with its content.
pub fn files() -> Vec<(PathBuf, String)> {
    let mods = modules();
    let dir = folder();
    let mut out = vec![(dir.join("mod.rs"), rustfmt(&render_mod(&mods)))];
    for m in &mods {
        out.push((dir.join(format!("{}.rs", m.name)), rustfmt(&render(m))));
    }
    out
}

#[test]
fn generated_code_is_current() {
    let write = std::env::var_os("KGROUP_GENERATE").is_some();
    let mut stale = Vec::new();
    for (path, code) in files() {
        let now = std::fs::read_to_string(&path).unwrap_or_default();
        if now != code {
            if write {
                std::fs::write(&path, code).expect("write generated code");
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "generated code differs from the declarations: {stale:?}; run `make generate`"
    );
}
