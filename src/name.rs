//! Tag names as the annotations hold them: interned for the process where there is room,
//! so that making and dropping an annotation touches no reference count on its name.
//!
//! Every annotation names its tag. A name shared with the configuration by reference
//! count costs two atomic operations per annotation, one when it is made and one when it
//! is dropped, on one cache line that every parser using the configuration writes, on
//! whatever thread it runs (DESIGN.md, decisions 108 and 117). An interned name is a
//! `&'static str`: copied, compared by address first, never counted.
//!
//! The interned names are never freed. So that a process compiling configurations from
//! untrusted input cannot grow them without bound, at most [`MAX_NAMES`] names of at most
//! [`MAX_NAME_BYTES`] bytes each are interned (64 KiB in all); a name past either limit is
//! held by reference count, as before, and behaves the same apart from the counting.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

/// Distinct names interned at most, for the process.
pub(crate) const MAX_NAMES: usize = 1024;

/// Bytes of the longest name interned.
pub(crate) const MAX_NAME_BYTES: usize = 64;

/// The names interned so far. Locked only while a configuration is compiled.
static INTERNED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// A recognized tag's name, spelled as configured.
#[derive(Clone)]
pub(crate) enum TagName {
    /// Interned: no count to keep.
    Static(&'static str),
    /// Past the interning limits: shared by reference count. (Boxed, so that the name
    /// takes two words, as an interned one does: one word for the count's pointer and
    /// the other free for the variant.)
    Shared(Arc<Box<str>>),
}

impl TagName {
    /// `name`, interned if it is already or if there is room, else in an allocation of
    /// its own.
    pub(crate) fn new(name: &str) -> TagName {
        match intern(name) {
            Some(s) => TagName::Static(s),
            None => TagName::Shared(Arc::new(Box::from(name))),
        }
    }

    /// The same name with no count shared with `self` (an interned name is shared by
    /// every thread without counting, so it stays as it is).
    pub(crate) fn unshared(&self) -> TagName {
        match self {
            TagName::Static(s) => TagName::Static(s),
            TagName::Shared(s) => TagName::Shared(Arc::new(Box::clone(s))),
        }
    }

    /// The name.
    #[inline]
    pub(crate) fn as_str(&self) -> &str {
        match self {
            TagName::Static(s) => s,
            TagName::Shared(s) => s,
        }
    }
}

/// `name` as an interned string: found among those interned, or interned now if it fits
/// the limits. (A poisoned lock is taken over: the set is only ever inserted into, so a
/// panic elsewhere cannot leave it half-changed.)
fn intern(name: &str) -> Option<&'static str> {
    if name.len() > MAX_NAME_BYTES {
        return None;
    }
    let mut set = INTERNED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(&s) = set.get(name) {
        return Some(s);
    }
    if set.len() >= MAX_NAMES {
        return None;
    }
    let s: &'static str = Box::leak(Box::from(name));
    set.insert(s);
    Some(s)
}

impl PartialEq for TagName {
    #[inline]
    fn eq(&self, other: &TagName) -> bool {
        match (self, other) {
            // Interned names are equal exactly when they are the same string.
            (TagName::Static(a), TagName::Static(b)) => std::ptr::eq(*a, *b),
            _ => self.as_str() == other.as_str(),
        }
    }
}

impl Eq for TagName {}

impl fmt::Debug for TagName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same name interns to the same string, whoever asks; a name over the byte limit
    /// is counted instead, and compares equal by value either way. Past `MAX_NAMES`
    /// distinct names new ones are counted too, and those interned before stay interned.
    /// (One test, in this order: the set is the process's, and filling it is the end.)
    #[test]
    fn names_intern_within_the_limits() {
        let (a, b) = (
            TagName::new("name_test_cite"),
            TagName::new("name_test_cite"),
        );
        assert!(
            matches!((&a, &b), (TagName::Static(x), TagName::Static(y)) if std::ptr::eq(*x, *y)),
            "a short name is interned once: {a:?} {b:?}"
        );
        assert_eq!(a, b);
        assert_eq!(a.as_str(), "name_test_cite");
        assert_ne!(a, TagName::new("name_test_note"));
        let long = "l".repeat(MAX_NAME_BYTES + 1);
        let c = TagName::new(&long);
        assert!(matches!(c, TagName::Shared(_)));
        assert_eq!(c.as_str(), long);
        assert_eq!(c, TagName::Shared(Arc::new(Box::from(long.as_str()))));
        assert_ne!(c, a);
        let edge = "e".repeat(MAX_NAME_BYTES);
        assert!(matches!(TagName::new(&edge), TagName::Static(_)));

        for i in 0..MAX_NAMES {
            let _ = TagName::new(&format!("name_test_fill_{i}"));
        }
        let set = INTERNED.lock().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(set.len(), MAX_NAMES);
        drop(set);
        let late = TagName::new("name_test_late");
        assert!(matches!(late, TagName::Shared(_)));
        assert_eq!(late.as_str(), "name_test_late");
        assert!(matches!(TagName::new("name_test_cite"), TagName::Static(_)));
        assert!(
            matches!(late.unshared(), TagName::Shared(ref s) if !matches!(&late, TagName::Shared(t) if Arc::ptr_eq(s, t)))
        );
        assert_eq!(late.unshared(), late);
        assert!(matches!(a.unshared(), TagName::Static(_)));
    }
}
