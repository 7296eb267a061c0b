//! Work arrays reused from one search to the next.
//!
//! A search of a segment fills arrays as long as the segment (the accumulated sums, group
//! masks): megabytes at a million records. Allocated afresh, their pages are faulted in and
//! cleared by the kernel on every query; taken from here they are only zeroed. Those arrays
//! are [`WorkArray`]s: the first one a process takes comes zeroed from the kernel in huge
//! pages. Smaller arrays (a chunk's, a histogram's) are vectors.

use std::ops::DerefMut;
use std::sync::Mutex;

use crate::format::mmap::{WorkArray, Zeroed};

/// An array a [`Pool`] keeps: a vector, or a [`WorkArray`].
pub(crate) trait Array: DerefMut<Target = [Self::Value]> + Sized {
    type Value: Copy + Default;
    /// `len` default values, fresh.
    fn fresh(len: usize) -> Self;
    /// How long the array can be made without new memory.
    fn capacity(&self) -> usize;
    /// Makes the array `len` long, within its capacity (the caller checked it). Returns how
    /// many values it may hold as left: from there on they are default.
    fn fit(&mut self, len: usize) -> usize;
    /// The array made `len` default values long, its capacity too short: grown in place
    /// where it can be, else replaced.
    fn grown(self, len: usize) -> Self;
}

impl<T: Copy + Default> Array for Vec<T> {
    type Value = T;
    fn fresh(len: usize) -> Vec<T> {
        vec![T::default(); len]
    }
    fn capacity(&self) -> usize {
        Vec::capacity(self)
    }
    fn fit(&mut self, len: usize) -> usize {
        let kept = self.len().min(len);
        self.resize(len, T::default());
        kept
    }
    fn grown(mut self, len: usize) -> Vec<T> {
        self.clear();
        self.reserve_exact(len);
        self.resize(len, T::default());
        self
    }
}

impl<T: Zeroed> Array for WorkArray<T> {
    type Value = T;
    fn fresh(len: usize) -> WorkArray<T> {
        WorkArray::zeroed(len)
    }
    fn capacity(&self) -> usize {
        WorkArray::capacity(self)
    }
    fn fit(&mut self, len: usize) -> usize {
        self.resize_within(len);
        len
    }
    fn grown(self, len: usize) -> WorkArray<T> {
        WorkArray::zeroed(len)
    }
}

/// A few arrays, handed out zeroed (or as left) and given back.
pub(crate) struct Pool<A> {
    free: Mutex<Vec<A>>,
}

/// Arrays kept per pool: enough for every segment of an index searched at once on a few
/// threads, not more.
const KEPT: usize = 64;

impl<A: Array> Pool<A> {
    pub const fn new() -> Pool<A> {
        Pool {
            free: Mutex::new(Vec::new()),
        }
    }

    /// An array of `len` default values.
    pub fn take(&self, len: usize) -> A {
        let (mut array, left) = self.take_sized(len);
        array[..left].fill(A::Value::default());
        array
    }

    /// An array of `len` values that are not zeroed: what an earlier search left there (for
    /// callers that write every value before reading any).
    pub fn take_unzeroed(&self, len: usize) -> A {
        self.take_sized(len).0
    }

    /// An array of `len` values, and how many of them may be as an earlier search left them:
    /// from there on each is the default — all of them when no kept array was long enough and
    /// a new one came (zeroing it again would touch every page twice, which a fresh process
    /// pays for at every search), past its old length when a kept vector grew.
    fn take_sized(&self, len: usize) -> (A, usize) {
        // The shortest kept array long enough, so that a short segment's search does not take
        // the array a long one needs; else the longest, grown (so the pool keeps no more
        // arrays than searches use at once).
        let kept = self.free.lock().ok().and_then(|mut free| {
            let capacity = |&i: &usize| free[i].capacity();
            let at = (0..free.len())
                .filter(|i| capacity(i) >= len)
                .min_by_key(capacity)
                .or_else(|| (0..free.len()).max_by_key(capacity))?;
            Some(free.swap_remove(at))
        });
        match kept {
            Some(mut array) if array.capacity() >= len => {
                let left = array.fit(len);
                (array, left)
            }
            Some(array) => (array.grown(len), 0),
            None => (A::fresh(len), 0),
        }
    }

    /// Keeps `array` for a later [`Pool::take`].
    pub fn give(&self, array: A) {
        if array.capacity() == 0 {
            return;
        }
        if let Ok(mut free) = self.free.lock() {
            if free.len() < KEPT {
                free.push(array);
            }
        }
    }
}

/// Pools of the arrays the index source uses: per record…
pub(crate) static RECORD_WORDS: Pool<WorkArray<u64>> = Pool::new();
pub(crate) static RECORD_MASKS: Pool<WorkArray<u16>> = Pool::new();
pub(crate) static RECORD_COUNTS: Pool<WorkArray<u32>> = Pool::new();
/// …and per chunk or per slot.
/// Tagged group masks, a chunk's and their last tag: taken as left, so only their own type
/// takes from here.
pub(crate) static TAGGED: Pool<Vec<u16>> = Pool::new();
pub(crate) static FLOATS: Pool<Vec<f64>> = Pool::new();
pub(crate) static COUNTS: Pool<Vec<u32>> = Pool::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_come_back_zeroed_and_sized() {
        let pool: Pool<Vec<u64>> = Pool::new();
        let mut a = pool.take(10);
        assert_eq!(a, vec![0; 10]);
        a.iter_mut().for_each(|x| *x = 7);
        pool.give(a);
        let b = pool.take(20);
        assert_eq!(b, vec![0; 20]);
        let c = pool.take(3);
        assert_eq!(c, vec![0; 3]);
        // A kept array long enough comes back zeroed too, shorter or longer than it was.
        let mut d = b;
        d.iter_mut().for_each(|x| *x = 9);
        d.truncate(12);
        pool.give(d);
        assert_eq!(pool.take(5), vec![0; 5]);
        let mut e = pool.take(20);
        assert_eq!(e, vec![0; 20]);
        e.iter_mut().for_each(|x| *x = 4);
        pool.give(e);
        assert_eq!(pool.take_unzeroed(20), vec![4; 20]);
    }

    #[test]
    fn record_arrays_come_back_zeroed_and_sized() {
        let pool: Pool<WorkArray<u32>> = Pool::new();
        let mut a = pool.take(1000);
        assert_eq!(&*a, &[0; 1000][..]);
        a.iter_mut().for_each(|x| *x = 7);
        pool.give(a);
        // Kept and long enough: zeroed by `take`, as left by `take_unzeroed`.
        assert_eq!(&*pool.take(600), &[0; 600][..]);
        let mut b = pool.take(1000);
        b.iter_mut().for_each(|x| *x = 5);
        pool.give(b);
        assert_eq!(&*pool.take_unzeroed(800), &[5; 800][..]);
        // Longer than every kept array: a fresh one, zero from the start, in place of the
        // longest kept (a pool keeps no more arrays than searches use at once).
        let mut c = pool.take(1000);
        c.iter_mut().for_each(|x| *x = 9);
        pool.give(c);
        let d = pool.take_unzeroed(1 << 20);
        assert_eq!(d.len(), 1 << 20);
        assert!(d.is_mapped() && d.iter().all(|&x| x == 0));
        assert!(pool.free.lock().unwrap().is_empty());
        // The shortest array long enough is handed out.
        let (long, mut short) = (pool.take(1 << 20), pool.take(100));
        short.iter_mut().for_each(|x| *x = 1);
        pool.give(long);
        pool.give(short);
        let mut taken = pool.take_unzeroed(50);
        assert_eq!((taken.capacity(), taken[0]), (100, 1));
        taken.iter_mut().for_each(|x| *x = 0);
        pool.give(taken);
        assert_eq!(pool.take_unzeroed(1 << 20).capacity(), 1 << 20);
        pool.free.lock().unwrap().clear();
        // None long enough: the longest is taken (and replaced), not kept beside a new one.
        let (ten, twenty) = (pool.take(10), pool.take(20));
        pool.give(ten);
        pool.give(twenty);
        let longer = pool.take(30);
        assert_eq!(&*longer, &[0; 30][..]);
        let kept: Vec<usize> = pool.free.lock().unwrap().iter().map(|a| a.len()).collect();
        assert_eq!(kept, [10]);
        pool.free.lock().unwrap().clear();
        // Empty arrays are not kept.
        pool.give(WorkArray::default());
        assert_eq!(pool.free.lock().unwrap().len(), 0);
    }
}
