//! Per-record work arrays reused from one search to the next.
//!
//! A search of a segment fills arrays as long as the segment (the accumulated sums, group
//! masks, phrase bits): megabytes at a million records. Allocated afresh, their pages are
//! faulted in and cleared by the kernel on every query; taken from here they are only zeroed.

use std::sync::Mutex;

/// A few zeroed arrays of `T`, handed out and given back.
pub(crate) struct Pool<T> {
    free: Mutex<Vec<Vec<T>>>,
}

/// Arrays kept per pool: enough for every segment of an index searched at once on a few
/// threads, not more.
const KEPT: usize = 64;

impl<T: Copy + Default> Pool<T> {
    pub const fn new() -> Pool<T> {
        Pool {
            free: Mutex::new(Vec::new()),
        }
    }

    /// An array of `len` default values.
    pub fn take(&self, len: usize) -> Vec<T> {
        let (mut array, zeroed) = self.take_sized(len);
        if !zeroed {
            array.fill(T::default());
        }
        array
    }

    /// An array of `len` values that are not zeroed: what an earlier search left there (for
    /// callers that write every value before reading any).
    pub fn take_unzeroed(&self, len: usize) -> Vec<T> {
        self.take_sized(len).0
    }

    /// An array of `len` values, and whether each is the default: so when no kept array was
    /// long enough and a new one was filled (zeroing it again would touch every page twice,
    /// which a fresh process pays for at every search).
    fn take_sized(&self, len: usize) -> (Vec<T>, bool) {
        let mut array = self
            .free
            .lock()
            .map(|mut free| free.pop().unwrap_or_default())
            .unwrap_or_default();
        let fresh = array.capacity() < len;
        if fresh {
            array.clear();
            array.reserve_exact(len);
            crate::format::mmap::prefer_huge_pages(&mut array);
        }
        array.resize(len, T::default());
        array.truncate(len);
        (array, fresh)
    }

    /// Keeps `array` for a later [`Pool::take`].
    pub fn give(&self, array: Vec<T>) {
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

/// Pools of the arrays the index source uses.
pub(crate) static WORDS: Pool<u64> = Pool::new();
pub(crate) static MASKS: Pool<u16> = Pool::new();
pub(crate) static FLOATS: Pool<f64> = Pool::new();
pub(crate) static COUNTS: Pool<u32> = Pool::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_come_back_zeroed_and_sized() {
        let pool: Pool<u64> = Pool::new();
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
}
