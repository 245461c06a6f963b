//! Typed indexes: an index into one collection cannot index another. [`IdVec`] is a vector
//! indexed by its own id type, whose lookups return `Option` and never panic; [`DeclId`] is the
//! id of one kind of declaration (see [`crate::resolve::ToolId`] and the other aliases).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

/// A typed position in an [`IdVec`].
pub trait Idx: Copy + Ord {
    /// The id of position `index`.
    fn from_index(index: usize) -> Self;
    /// The position.
    fn index(self) -> usize;
}

/// A vector indexed by `I`.
pub struct IdVec<I, V> {
    items: Vec<V>,
    _id: PhantomData<fn(I) -> I>,
}

impl<I: Idx, V> IdVec<I, V> {
    /// An empty vector.
    pub fn new() -> Self {
        IdVec {
            items: Vec::new(),
            _id: PhantomData,
        }
    }

    /// `len` copies of `value`.
    pub fn filled(value: V, len: usize) -> Self
    where
        V: Clone,
    {
        IdVec {
            items: vec![value; len],
            _id: PhantomData,
        }
    }

    /// Appends `value` and returns its id.
    pub fn push(&mut self, value: V) -> I {
        self.items.push(value);
        I::from_index(self.items.len() - 1)
    }

    /// The value at `id`.
    pub fn get(&self, id: I) -> Option<&V> {
        self.items.get(id.index())
    }

    /// The value at `id`, mutably.
    pub fn get_mut(&mut self, id: I) -> Option<&mut V> {
        self.items.get_mut(id.index())
    }

    /// How many values there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The values, in id order.
    pub fn iter(&self) -> std::slice::Iter<'_, V> {
        self.items.iter()
    }

    /// The values, mutably, in id order.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, V> {
        self.items.iter_mut()
    }

    /// The ids, in order.
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = I> + use<I, V> {
        (0..self.items.len()).map(I::from_index)
    }

    /// Each id with its value, in id order.
    pub fn iter_enumerated(&self) -> impl DoubleEndedIterator<Item = (I, &V)> {
        self.items.iter().enumerate().map(|(i, v)| (I::from_index(i), v))
    }

    /// Each id with its value, mutably, in id order.
    pub fn iter_enumerated_mut(&mut self) -> impl DoubleEndedIterator<Item = (I, &mut V)> {
        self.items.iter_mut().enumerate().map(|(i, v)| (I::from_index(i), v))
    }

    /// A vector with the same ids, each value mapped by `f`.
    pub fn map<'a, U>(&'a self, f: impl FnMut(&'a V) -> U) -> IdVec<I, U> {
        IdVec {
            items: self.items.iter().map(f).collect(),
            _id: PhantomData,
        }
    }

    /// The first value.
    pub fn first(&self) -> Option<&V> {
        self.items.first()
    }
}

impl<I: Idx, V> Default for IdVec<I, V> {
    fn default() -> Self {
        IdVec::new()
    }
}

impl<I, V: Clone> Clone for IdVec<I, V> {
    fn clone(&self) -> Self {
        IdVec {
            items: self.items.clone(),
            _id: PhantomData,
        }
    }
}

impl<I, V: fmt::Debug> fmt::Debug for IdVec<I, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.items).finish()
    }
}

impl<'a, I: Idx, V> IntoIterator for &'a IdVec<I, V> {
    type Item = &'a V;
    type IntoIter = std::slice::Iter<'a, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<I: Idx, V> IntoIterator for IdVec<I, V> {
    type Item = V;
    type IntoIter = std::vec::IntoIter<V>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

/// The id of a declaration of type `T` (an `ast::ToolDecl`, …): its position in the program's
/// collection of that kind.
pub struct DeclId<T> {
    index: usize,
    _decl: PhantomData<fn() -> T>,
}

impl<T> Idx for DeclId<T> {
    fn from_index(index: usize) -> Self {
        DeclId {
            index,
            _decl: PhantomData,
        }
    }

    fn index(self) -> usize {
        self.index
    }
}

// Written out, because derives would demand `T: Clone`, `T: Ord`, … of the declaration type.
impl<T> Clone for DeclId<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DeclId<T> {}

impl<T> PartialEq for DeclId<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}

impl<T> Eq for DeclId<T> {}

impl<T> PartialOrd for DeclId<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for DeclId<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}

impl<T> Hash for DeclId<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.index.hash(state);
    }
}

impl<T> fmt::Debug for DeclId<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeclId({})", self.index)
    }
}
