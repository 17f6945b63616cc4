//! Small read-only tables on the device (filter taps, coefficient tables,
//! colour maps), kept by content.
//!
//! A table written with a blocking transfer on the in-order queue waits for
//! every command queued before it, which in a stream is the previous
//! frame's kernels: the host stalls once per table per frame. A table is
//! written once, the first time its content is asked for, and every later
//! request with the same bytes shares that buffer. Kernels only read
//! these buffers.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::buffer::Plain;
use super::{ClDevice, DeviceBuffer};
use crate::error::Result;

/// Tables kept beyond this count are dropped all at once (a program that
/// keeps asking for new content, such as a sweep over sigma, would
/// otherwise grow without bound).
const MAX_TABLES: usize = 256;

/// A kept table: a `DeviceBuffer<T>` of the key's element type.
type Kept = Arc<dyn Any + Send + Sync>;

/// The device's kept tables, by element type and bytes.
#[derive(Default)]
pub(crate) struct Constants(Mutex<HashMap<(TypeId, Vec<u8>), Kept>>);

/// The bytes of `data`.
fn bytes_of<T: Plain>(data: &[T]) -> &[u8] {
    // SAFETY: `T: Plain` has no padding bytes, so every byte of `data` is
    // initialised; the view covers exactly `data`'s memory and borrows it.
    unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) }
}

impl ClDevice {
    /// A read-only device buffer holding `data`: written on first use,
    /// shared afterwards by every request with the same content.
    pub(crate) fn constants<T: Plain>(&self, data: &[T]) -> Result<Arc<DeviceBuffer<T>>> {
        let key = (TypeId::of::<T>(), bytes_of(data).to_vec());
        let kept = self
            .constants
            .0
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned());
        if let Some(buf) = kept.and_then(|b| b.downcast::<DeviceBuffer<T>>().ok()) {
            return Ok(buf);
        }
        let buf = Arc::new(DeviceBuffer::from_slice(self, data)?);
        if let Ok(mut m) = self.constants.0.lock() {
            if m.len() >= MAX_TABLES {
                m.clear();
            }
            m.insert(key, buf.clone());
        }
        Ok(buf)
    }
}
