//! Slab: values in numbered slots that stay put, so that timers and parked requests can name a
//! group or a member by a small integer. Freed slots are reused, lowest first.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Slab holds values under `u32` slots. Iteration is in slot order, which depends only on the
/// sequence of inserts and removes: deterministic.
#[derive(Debug, Clone)]
#[repr(C)]
pub(crate) struct Slab<T> {
    items: Vec<Option<T>>,
    free: BinaryHeap<Reverse<u32>>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: BinaryHeap::new(),
            len: 0,
        }
    }
}

impl<T> Slab<T> {
    /// insert stores `v` and returns its slot.
    pub fn insert(&mut self, v: T) -> u32 {
        self.len += 1;
        match self.free.pop() {
            Some(Reverse(i)) => {
                self.items[i as usize] = Some(v);
                i
            }
            None => {
                self.items.push(Some(v));
                (self.items.len() - 1) as u32
            }
        }
    }

    /// remove takes the value out of `slot`.
    pub fn remove(&mut self, slot: u32) -> Option<T> {
        let v = self.items.get_mut(slot as usize)?.take();
        if v.is_some() {
            self.len -= 1;
            self.free.push(Reverse(slot));
        }
        v
    }

    #[inline]
    pub fn get(&self, slot: u32) -> Option<&T> {
        self.items.get(slot as usize)?.as_ref()
    }

    #[inline]
    pub fn get_mut(&mut self, slot: u32) -> Option<&mut T> {
        self.items.get_mut(slot as usize)?.as_mut()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// iter yields (slot, value) in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> + '_ {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_ref().map(|v| (i as u32, v)))
    }

    /// iter_mut yields (slot, value) in slot order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u32, &mut T)> + '_ {
        self.items
            .iter_mut()
            .enumerate()
            .filter_map(|(i, v)| v.as_mut().map(|v| (i as u32, v)))
    }

    /// slots are the occupied slots, in order.
    pub fn slots(&self) -> Vec<u32> {
        self.iter().map(|(i, _)| i).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_lowest_first() {
        let mut s = Slab::default();
        let a = s.insert("a");
        let b = s.insert("b");
        let c = s.insert("c");
        assert_eq!((a, b, c), (0, 1, 2));
        assert_eq!(s.remove(2), Some("c"));
        assert_eq!(s.remove(0), Some("a"));
        assert_eq!(s.remove(0), None);
        assert_eq!(s.len(), 1);
        assert_eq!(s.insert("d"), 0);
        assert_eq!(s.insert("e"), 2);
        assert_eq!(
            s.iter().map(|(_, v)| *v).collect::<Vec<_>>(),
            ["d", "b", "e"]
        );
    }
}
