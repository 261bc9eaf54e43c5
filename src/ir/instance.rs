//! The values of a kernel's constants in one instantiation.

use super::Value;
use crate::types::Scalar;

/// One instantiation of a kernel with constants: each kernel constant's
/// value, in declaration order. Its checked body has them folded in: the
/// IR knows no constants, only their values.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    /// The kdsl name of the kernel ([`Kernel::name`](super::Kernel::name)
    /// is the instantiation's).
    pub kernel: String,
    pub consts: Vec<InstanceConst>,
}

/// A kernel constant's value in one instantiation.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceConst {
    pub name: String,
    pub value: ConstValue,
    /// The value is the constant's default (evaluated in this
    /// instantiation): such constants do not appear in its PTX name.
    pub default: bool,
}

/// The value of a kernel constant: an integer or `bool` of its type, or a
/// type (`const ELEM: type = bf16`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstValue {
    Value(Value, Scalar),
    Type(Scalar),
}

impl ConstValue {
    /// The value as kdsl writes it: `128`, `-3`, `true`, `bf16`.
    pub fn text(&self) -> String {
        match self {
            ConstValue::Value(Value::Int(i), _) => i.to_string(),
            ConstValue::Value(Value::Bool(b), _) => b.to_string(),
            ConstValue::Value(Value::Float(f), _) => f.to_string(),
            ConstValue::Value(Value::Pair(lo, hi), _) => format!("{lo}/{hi}"),
            ConstValue::Type(t) => t.name().to_string(),
        }
    }

    /// The constant's type as written: `u32`, `bool`, `type`.
    pub fn type_name(&self) -> &'static str {
        match self {
            ConstValue::Value(_, t) => t.name(),
            ConstValue::Type(_) => "type",
        }
    }
}

impl Instance {
    /// `BM = 64, STAGES = 4, ELEM = bf16`: every constant with its value.
    pub fn values_text(&self) -> String {
        let parts: Vec<String> = self
            .consts
            .iter()
            .map(|c| format!("{} = {}", c.name, c.value.text()))
            .collect();
        parts.join(", ")
    }
}
