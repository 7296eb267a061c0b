//! Work arrays reused from one search to the next.
//!
//! A search of a segment fills arrays as long as the segment (the accumulated sums, group
//! masks): megabytes at a million records. Allocated afresh, their pages are faulted in and
//! cleared by the kernel on every query; taken from here they are only zeroed. Those arrays
//! are [`WorkArray`]s ([`Records`]): the first one a process takes comes zeroed from the
//! kernel in huge pages. Smaller arrays (a chunk's, a histogram's) are vectors ([`Pool`]).

use std::sync::Mutex;

use crate::format::mmap::{WorkArray, Zeroed};

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

/// A few per-record arrays of `T`, handed out and given back.
pub(crate) struct Records<T: Zeroed> {
    free: Mutex<Vec<WorkArray<T>>>,
}

impl<T: Zeroed> Records<T> {
    pub const fn new() -> Records<T> {
        Records {
            free: Mutex::new(Vec::new()),
        }
    }

    /// An array of `len` zeros.
    pub fn take(&self, len: usize) -> WorkArray<T> {
        let (mut array, zeroed) = self.take_sized(len);
        if !zeroed {
            array.fill(T::default());
        }
        array
    }

    /// An array of `len` values that are not zeroed: what an earlier search left there (for
    /// callers that write every value before reading any).
    pub fn take_unzeroed(&self, len: usize) -> WorkArray<T> {
        self.take_sized(len).0
    }

    /// An array of `len` values, and whether each is zero: so when no kept array was long
    /// enough and a new one came (zeroed by the kernel, its pages not yet touched).
    fn take_sized(&self, len: usize) -> (WorkArray<T>, bool) {
        let mut free = self.free.lock().ok();
        let kept = free.as_mut().and_then(|free| {
            let at = free.iter().position(|array| array.capacity() >= len)?;
            Some(free.swap_remove(at))
        });
        drop(free);
        match kept {
            Some(mut array) => {
                array.resize_within(len);
                (array, false)
            }
            None => (WorkArray::zeroed(len), true),
        }
    }

    /// Keeps `array` for a later [`Records::take`].
    pub fn give(&self, array: WorkArray<T>) {
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
pub(crate) static RECORD_WORDS: Records<u64> = Records::new();
pub(crate) static RECORD_MASKS: Records<u16> = Records::new();
pub(crate) static RECORD_COUNTS: Records<u32> = Records::new();
/// …and per chunk or per slot.
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

    #[test]
    fn record_arrays_come_back_zeroed_and_sized() {
        let pool: Records<u32> = Records::new();
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
        // Longer than every kept array: a fresh one, zero from the start; the short one is
        // kept for a later, shorter request.
        let mut c = pool.take(1000);
        c.iter_mut().for_each(|x| *x = 9);
        pool.give(c);
        let d = pool.take_unzeroed(1 << 20);
        assert_eq!(d.len(), 1 << 20);
        assert!(d.is_mapped() && d.iter().all(|&x| x == 0));
        assert_eq!(&*pool.take_unzeroed(1000), &[9; 1000][..]);
        // Empty arrays are not kept.
        pool.give(WorkArray::default());
        assert_eq!(pool.free.lock().unwrap().len(), 0);
    }
}
