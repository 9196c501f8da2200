//! Tag names as the annotations hold them: interned for the process where there is room,
//! so that making and dropping an annotation touches no reference count on its name.
//!
//! Every annotation names its tag. A name shared with the configuration by reference
//! count costs two atomic operations per annotation, one when it is made and one when it
//! is dropped, on one cache line that every parser using the configuration writes, on
//! whatever thread it runs (DESIGN.md, decisions 108 and 117). An interned name is a
//! `&'static str`: copied, compared by address, never counted.
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

/// A string from [`INTERNED`]: made only by [`intern`] (the field is private to this
/// module), so two are the same string exactly when they are at the same address.
#[derive(Clone, Copy)]
pub(crate) struct Interned(&'static str);

/// A recognized tag's name, spelled as configured.
#[derive(Clone)]
pub(crate) enum TagName {
    /// Interned: no count to keep.
    Static(Interned),
    /// Past the interning limits: shared by reference count. (Boxed, so that the name
    /// takes two words, as an interned one does: one word for the count's pointer and
    /// the other free for the variant.)
    Shared(Arc<Box<str>>),
}

// The two words the layout above is for (a third made `parse()` slower: decision 117).
const _: () = assert!(std::mem::size_of::<TagName>() == 2 * std::mem::size_of::<usize>());

impl TagName {
    /// `name`, interned if it is already or if there is room, else in an allocation of
    /// its own. (A poisoned lock is taken over: the set is only ever inserted into, so a
    /// panic elsewhere cannot leave it half-changed.)
    pub(crate) fn new(name: &str) -> TagName {
        let mut set = INTERNED.lock().unwrap_or_else(PoisonError::into_inner);
        match intern(&mut set, name) {
            Some(s) => TagName::Static(s),
            None => TagName::Shared(Arc::new(Box::from(name))),
        }
    }

    /// The same name with no count shared with `self` (an interned name is shared by
    /// every thread without counting, so it stays as it is).
    pub(crate) fn unshared(&self) -> TagName {
        match self {
            TagName::Static(s) => TagName::Static(*s),
            TagName::Shared(s) => TagName::Shared(Arc::new(Box::clone(s))),
        }
    }

    /// The name.
    #[inline]
    pub(crate) fn as_str(&self) -> &str {
        match self {
            TagName::Static(s) => s.0,
            TagName::Shared(s) => s,
        }
    }
}

/// `name` as an interned string of `set` ([`INTERNED`], locked, outside the tests): found
/// among those interned, or interned now if it fits the limits.
fn intern(set: &mut BTreeSet<&'static str>, name: &str) -> Option<Interned> {
    if name.len() > MAX_NAME_BYTES {
        return None;
    }
    if let Some(&s) = set.get(name) {
        return Some(Interned(s));
    }
    if set.len() >= MAX_NAMES {
        return None;
    }
    let s: &'static str = Box::leak(Box::from(name));
    set.insert(s);
    Some(Interned(s))
}

impl PartialEq for TagName {
    #[inline]
    fn eq(&self, other: &TagName) -> bool {
        match (self, other) {
            // Interned names are equal exactly when they are the same string.
            (TagName::Static(a), TagName::Static(b)) => std::ptr::eq(a.0, b.0),
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
    /// is counted instead, and compares equal by value either way.
    #[test]
    fn names_intern_up_to_the_byte_limit() {
        let (a, b) = (
            TagName::new("name_test_cite"),
            TagName::new("name_test_cite"),
        );
        assert!(
            matches!((&a, &b), (TagName::Static(x), TagName::Static(y)) if std::ptr::eq(x.0, y.0)),
            "a short name is interned once: {a:?} {b:?}"
        );
        assert_eq!(a, b);
        assert_eq!(a.as_str(), "name_test_cite");
        assert_ne!(a, TagName::new("name_test_note"));
        assert!(matches!(a.unshared(), TagName::Static(s) if std::ptr::eq(s.0, a.as_str())));
        let long = "l".repeat(MAX_NAME_BYTES + 1);
        let c = TagName::new(&long);
        assert!(matches!(c, TagName::Shared(_)));
        assert_eq!(c.as_str(), long);
        assert_eq!(c, TagName::Shared(Arc::new(Box::from(long.as_str()))));
        assert_ne!(c, a);
        let copy = c.unshared();
        assert!(
            matches!((&copy, &c), (TagName::Shared(x), TagName::Shared(y)) if !Arc::ptr_eq(x, y))
        );
        assert_eq!(copy, c);
        let edge = "e".repeat(MAX_NAME_BYTES);
        assert!(matches!(TagName::new(&edge), TagName::Static(_)));
    }

    /// Past `MAX_NAMES` distinct names a new one is refused (to be counted instead), and
    /// those interned before are still found. (On a set of the test's own, not the
    /// process's, which other tests use at the same time.)
    #[test]
    fn interning_stops_at_the_name_limit() {
        let mut set = BTreeSet::new();
        let first = intern(&mut set, "first").map(|s| s.0);
        assert_eq!(first, Some("first"));
        for i in 1..MAX_NAMES {
            assert!(intern(&mut set, &format!("fill_{i}")).is_some());
        }
        assert_eq!(set.len(), MAX_NAMES);
        assert!(intern(&mut set, "late").is_none());
        assert_eq!(set.len(), MAX_NAMES);
        let again = intern(&mut set, "first").map(|s| s.0);
        assert!(again.zip(first).is_some_and(|(a, b)| std::ptr::eq(a, b)));
        assert!(intern(&mut set, &"x".repeat(MAX_NAME_BYTES + 1)).is_none());
    }
}
