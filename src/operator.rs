//! The operators, one definition for the syntax and the IR: the parser
//! builds `ast` expressions with them and the checker hands them on into
//! `ir` unchanged. They belong to neither stage (like `types::Scalar`), so
//! nothing after the checker depends on the AST and the IR needs no twin.

use crate::types::Scalar;

/// A binary operator. `&&` and `||` short-circuit; every other operator
/// evaluates both operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `&&`, short-circuit.
    And,
    /// `||`, short-circuit.
    Or,
}

impl BinOp {
    /// The operator as kdsl spells it (for `--emit ir` and messages).
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    /// `==` … `>=`: operands of one type, a `bool` result.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }

    /// `&&` and `||`: `bool` operands, the right one evaluated only when needed.
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }

    /// `<<` and `>>`: the amount may have any integer type.
    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::Shl | BinOp::Shr)
    }

    pub fn is_bitwise(self) -> bool {
        matches!(self, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor)
    }

    /// Does the operator apply to (left) operands of type `ty` in the IR?
    /// The IR's domains are those the PTX writer defines, wider than the
    /// language's (the checker's E0118): `%` on floats (`x` minus
    /// `trunc(x / y)` times `y`) and ordering comparisons on `bool`
    /// (`false < true`) are IR a pass may produce, though no program can
    /// write them.
    pub fn applies_to(self, ty: Scalar) -> bool {
        use BinOp::*;
        match self {
            // Pairs of halves: `add`/`sub`/`mul.rn.f16x2`, nothing else.
            Add | Sub | Mul => ty.is_int() || ty.is_float() || ty.is_packed(),
            Div | Rem => ty.is_int() || ty.is_float(),
            Shl | Shr => ty.is_int(),
            BitAnd | BitOr | BitXor => ty.is_int() || ty == Scalar::Bool,
            // Storage types (`e4m3`, ...) have no operator at all.
            Eq | Ne | Lt | Le | Gt | Ge => !ty.is_storage_only() && !ty.is_packed(),
            And | Or => ty == Scalar::Bool,
        }
    }
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `!x`: logical not on `bool`, bitwise not on integers.
    Not,
}

impl UnaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Neg => "-",
            UnaryOp::Not => "!",
        }
    }
}
