//! Sprig's hashes, crypto and UUIDs: only `sha256sum` is evaluated; the others are random or
//! secret-making and refused.

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("sha256sum", Func::Native(sha256sum)),
    ("randBytes", Func::Unsupported),
    ("uuidv4", Func::Unsupported),
    ("genPrivateKey", Func::Unsupported),
    ("derivePassword", Func::Unsupported),
    ("buildCustomCert", Func::Unsupported),
    ("genCA", Func::Unsupported),
    ("genCAWithKey", Func::Unsupported),
    ("genSelfSignedCert", Func::Unsupported),
    ("genSelfSignedCertWithKey", Func::Unsupported),
    ("genSignedCert", Func::Unsupported),
    ("genSignedCertWithKey", Func::Unsupported),
    ("encryptAES", Func::Unsupported),
    ("decryptAES", Func::Unsupported),
    ("bcrypt", Func::Unsupported),
    ("htpasswd", Func::Unsupported),
    ("sha1sum", Func::Unsupported),
    ("sha512sum", Func::Unsupported),
    ("adler32sum", Func::Unsupported),
];

fn sha256sum(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    // Hashing costs what the text holds.
    budget.charge(st(&a[0])?.len())?;
    s(&crate::sha256::hex_digest(st(&a[0])?.as_bytes()))
}
