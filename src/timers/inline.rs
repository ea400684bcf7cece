//! One-shot callbacks stored inline: [`InlineFn`], a [`SmallBox`] that
//! keeps a closure of up to two words in place and boxes a larger one.
//! The deferred-operation queue (`current.rs`) uses it: a sleep's arming
//! captures two words (its shared state and a time). Immediates use the
//! two-word `ThinOnce` of `thin.rs` instead, whose entry is smaller.
//!
//! A `dyn FnOnce` cannot be called out of a `SmallBox` on stable Rust, so
//! the stored closure is an `FnMut` over an `Option` of the user's closure,
//! emptied by the first call (later calls do nothing). A closure capturing
//! nothing or one word (an `i64`, an `Rc`) then fits in the two words.
//!
//! Ground rules:
//! - the one `unsafe` here is the expansion of smallbox's own
//!   [`smallbox!`] macro, which stable Rust needs to coerce the closure to
//!   `dyn FnMut` (the macro passes the pointer to the value it was given,
//!   as its contract asks); no other module uses the macro, and this one
//!   writes no `unsafe` itself;
// `deny`, not `forbid`: the macro's expansion carries its own
// `#[allow(unsafe_code)]`, which `forbid` would refuse.
#![deny(unsafe_code)]

use smallbox::space::S2;
use smallbox::{SmallBox, smallbox};

use super::EventLoop;
use super::error::{BoxError, CallbackResult};

type Callback = dyn FnMut(&mut EventLoop) -> Result<(), BoxError>;

/// A stored one-shot callback, inline when it fits in two words.
pub(crate) struct InlineFn(SmallBox<Callback, S2>);

// A `SmallBox<dyn FnMut>` is `Unpin` only if the closure in it is; the
// `Box` it replaces always is, and so was every type that stores one (the
// loop itself). Nothing pins the closure: it is only ever called through
// `&mut`, so the stored callback is `Unpin` whatever it captured.
impl Unpin for InlineFn {}

impl std::ops::Deref for InlineFn {
    type Target = Callback;
    fn deref(&self) -> &Callback {
        &*self.0
    }
}

impl std::ops::DerefMut for InlineFn {
    fn deref_mut(&mut self) -> &mut Callback {
        &mut *self.0
    }
}

/// Stores `f` as an [`InlineFn`]: called once, it runs `f`; called again,
/// it does nothing.
pub(crate) fn inline_once<F, R>(f: F) -> InlineFn
where
    F: FnOnce(&mut EventLoop) -> R + 'static,
    R: CallbackResult,
{
    let mut f = Some(f);
    // SAFETY: none of ours: `smallbox!` expands to smallbox's own
    // `unsafe` constructor, given the value and its address as the macro
    // means it to be (see the module docs).
    InlineFn(smallbox!(move |lp: &mut EventLoop| match f.take() {
        Some(f) => f(lp).into_result(),
        None => Ok(()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn a_word_is_stored_inline_and_more_is_boxed() {
        let small = inline_once(|_| black(1_i64));
        assert!(!small.0.is_heap());
        let rc = Rc::new(0);
        let small = inline_once(move |_| black(*rc));
        assert!(!small.0.is_heap());
        let big = [1_i64; 3];
        let large = inline_once(move |_| black(big[0]));
        assert!(large.0.is_heap());
    }

    fn black(_: i64) {}

    #[test]
    fn a_stored_callback_is_unpin_whatever_it_captures() {
        fn unpin<T: Unpin>(_: &T) {}
        let pinned = std::marker::PhantomPinned;
        let f = inline_once(move |_| {
            let _ = &pinned;
        });
        unpin(&f);
    }

    #[test]
    fn runs_once_and_drops_what_it_captured() {
        let runs = Rc::new(Cell::new(0));
        let r = runs.clone();
        let mut f = inline_once(move |_| r.set(r.get() + 1));
        let mut lp = EventLoop::with_virtual_clock();
        assert!(f(&mut lp).is_ok());
        assert_eq!(Rc::strong_count(&runs), 1); // the capture went with the call
        assert!(f(&mut lp).is_ok());
        assert_eq!(runs.get(), 1);
        let r = runs.clone();
        drop(inline_once(move |_| r.set(10)));
        assert_eq!((runs.get(), Rc::strong_count(&runs)), (1, 1));
    }
}
