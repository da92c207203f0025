//! Fetched records as one Arrow record batch, exported through the Arrow C Data Interface
//! (<https://arrow.apache.org/docs/format/CDataInterface.html>) without an Arrow crate: the
//! columns are plain `Vec`s that the exported structs own until the importer releases them.
//!
//! The schema is that of Spark's Kafka source: `key binary, value binary, topic string,
//! partition int32, offset int64, timestamp timestamp[ms], timestampType int32, headers
//! list<struct<key: string not null, value: binary>>` (Spark's `timestampType`: 0 CreateTime,
//! 1 LogAppendTime, -1 none).

use std::ffi::{c_char, c_void, CString};
use std::ptr;

use super::fetch::Run;
use crate::protocol::records::TimestampType;

/// ArrowSchema is the C Data Interface's `struct ArrowSchema`.
#[repr(C)]
pub struct ArrowSchema {
    pub format: *const c_char,
    pub name: *const c_char,
    pub metadata: *const c_char,
    pub flags: i64,
    pub n_children: i64,
    pub children: *mut *mut ArrowSchema,
    pub dictionary: *mut ArrowSchema,
    pub release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    pub private_data: *mut c_void,
}

/// ArrowArray is the C Data Interface's `struct ArrowArray`.
#[repr(C)]
pub struct ArrowArray {
    pub length: i64,
    pub null_count: i64,
    pub offset: i64,
    pub n_buffers: i64,
    pub n_children: i64,
    pub buffers: *mut *const c_void,
    pub children: *mut *mut ArrowArray,
    pub dictionary: *mut ArrowArray,
    pub release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    pub private_data: *mut c_void,
}

const NULLABLE: i64 = 2;

/// Buffer is one column buffer, kept in its element type so that it is aligned for it.
enum Buffer {
    Absent,
    U8(Vec<u8>),
    I32(Vec<i32>),
    I64(Vec<i64>),
}

impl Buffer {
    fn ptr(&self) -> *const c_void {
        match self {
            Buffer::Absent => ptr::null(),
            Buffer::U8(v) => v.as_ptr() as *const c_void,
            Buffer::I32(v) => v.as_ptr() as *const c_void,
            Buffer::I64(v) => v.as_ptr() as *const c_void,
        }
    }
}

/// Column is one array before export: its buffers and children.
struct Column {
    length: usize,
    null_count: usize,
    buffers: Vec<Buffer>,
    children: Vec<Column>,
}

/// Field is one field of the schema.
struct Field {
    format: &'static str,
    name: &'static str,
    flags: i64,
    children: Vec<Field>,
}

fn field(format: &'static str, name: &'static str, nullable: bool) -> Field {
    Field {
        format,
        name,
        flags: if nullable { NULLABLE } else { 0 },
        children: Vec::new(),
    }
}

fn schema() -> Field {
    let header = Field {
        children: vec![field("u", "key", false), field("z", "value", true)],
        ..field("+s", "item", false)
    };
    let headers = Field {
        children: vec![header],
        ..field("+l", "headers", true)
    };
    Field {
        children: vec![
            field("z", "key", true),
            field("z", "value", true),
            field("u", "topic", false),
            field("i", "partition", false),
            field("l", "offset", false),
            field("tsm:", "timestamp", false),
            field("i", "timestampType", false),
            headers,
        ],
        ..field("+s", "", false)
    }
}

/// Validity builds a validity bitmap, allocated only once a null is seen.
struct Validity {
    bits: Vec<u8>,
    len: usize,
    nulls: usize,
}

impl Validity {
    fn new() -> Self {
        Validity {
            bits: Vec::new(),
            len: 0,
            nulls: 0,
        }
    }

    fn push(&mut self, valid: bool) {
        if !valid && self.nulls == 0 {
            // First null: every earlier slot was valid.
            self.bits = vec![0xff; self.len.div_ceil(8)];
            if self.len % 8 != 0 {
                let last = self.bits.len() - 1;
                self.bits[last] = (1u8 << (self.len % 8)) - 1;
            }
        }
        if !valid {
            self.nulls += 1;
        }
        if self.nulls > 0 {
            if self.len % 8 == 0 {
                self.bits.push(0);
            }
            if valid {
                self.bits[self.len / 8] |= 1 << (self.len % 8);
            }
        }
        self.len += 1;
    }

    fn finish(self) -> (Buffer, usize) {
        if self.nulls == 0 {
            (Buffer::Absent, 0)
        } else {
            (Buffer::U8(self.bits), self.nulls)
        }
    }
}

/// Binary builds a binary or string column (int32 offsets).
struct Binary {
    validity: Validity,
    offsets: Vec<i32>,
    data: Vec<u8>,
}

impl Binary {
    fn new(rows: usize, bytes: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Binary {
            validity: Validity::new(),
            offsets,
            data: Vec::with_capacity(bytes),
        }
    }

    fn push(&mut self, v: Option<&[u8]>) {
        self.validity.push(v.is_some());
        if let Some(v) = v {
            self.data.extend_from_slice(v);
        }
        self.offsets.push(self.data.len() as i32);
    }

    fn finish(self) -> Column {
        let (validity, null_count) = self.validity.finish();
        Column {
            length: self.offsets.len() - 1,
            null_count,
            buffers: vec![validity, Buffer::I32(self.offsets), Buffer::U8(self.data)],
            children: Vec::new(),
        }
    }
}

fn primitive(b: Buffer, length: usize) -> Column {
    Column {
        length,
        null_count: 0,
        buffers: vec![Buffer::Absent, b],
        children: Vec::new(),
    }
}

/// record_batch builds the columns of `runs`' records (in order) and exports them as a struct
/// array and its schema. Header keys that are not UTF-8 are read as Java reads them (invalid
/// bytes replaced). The caller keeps the records' bytes under 2 GiB
/// ([`FetchQueue::pop_runs`](super::fetch::FetchQueue::pop_runs) with `max_bytes`): the
/// offsets are int32.
pub fn record_batch(runs: &[Run]) -> (Box<ArrowArray>, Box<ArrowSchema>) {
    let rows: usize = runs.iter().map(Run::len).sum();
    let (mut kb, mut vb, mut tb) = (0usize, 0usize, 0usize);
    for run in runs {
        tb += run.topic.len() * run.len();
        for r in &run.records {
            kb += r.span.key.map_or(0, |x| x.1);
            vb += r.span.value.map_or(0, |x| x.1);
        }
    }
    let mut key = Binary::new(rows, kb);
    let mut value = Binary::new(rows, vb);
    let mut topic = Binary::new(rows, tb);
    let mut partition = Vec::with_capacity(rows);
    let mut offset = Vec::with_capacity(rows);
    let mut timestamp = Vec::with_capacity(rows);
    let mut ts_type = Vec::with_capacity(rows);
    let mut list_validity = Validity::new();
    let mut list_offsets: Vec<i32> = Vec::with_capacity(rows + 1);
    list_offsets.push(0);
    let mut hkey = Binary::new(0, 0);
    let mut hvalue = Binary::new(0, 0);
    let mut n_headers = 0usize;
    let mut lossy = String::new();

    for run in runs {
        for fr in &run.records {
            let b = &run.batches[fr.batch as usize];
            let r = b.record(&fr.span);
            key.push(r.key);
            value.push(r.value);
            topic.push(Some(run.topic.as_bytes()));
            partition.push(run.partition);
            offset.push(r.offset);
            timestamp.push(r.timestamp);
            ts_type.push(match b.timestamp_type {
                TimestampType::NoTimestampType => -1,
                TimestampType::CreateTime => 0,
                TimestampType::LogAppendTime => 1,
            });
            let count = r.header_count();
            list_validity.push(count > 0);
            for (k, v) in r.headers() {
                match std::str::from_utf8(k) {
                    Ok(_) => hkey.push(Some(k)),
                    Err(_) => {
                        lossy.clear();
                        lossy.push_str(&String::from_utf8_lossy(k));
                        hkey.push(Some(lossy.as_bytes()));
                    }
                }
                hvalue.push(v);
                n_headers += 1;
            }
            list_offsets.push(n_headers as i32);
        }
    }

    let header_struct = Column {
        length: n_headers,
        null_count: 0,
        buffers: vec![Buffer::Absent],
        children: vec![hkey.finish(), hvalue.finish()],
    };
    let (lv, list_nulls) = list_validity.finish();
    let headers = Column {
        length: rows,
        null_count: list_nulls,
        buffers: vec![lv, Buffer::I32(list_offsets)],
        children: vec![header_struct],
    };
    let root = Column {
        length: rows,
        null_count: 0,
        buffers: vec![Buffer::Absent],
        children: vec![
            key.finish(),
            value.finish(),
            topic.finish(),
            primitive(Buffer::I32(partition), rows),
            primitive(Buffer::I64(offset), rows),
            primitive(Buffer::I64(timestamp), rows),
            primitive(Buffer::I32(ts_type), rows),
            headers,
        ],
    };
    (export_array(root), export_schema(schema()))
}

// ---------------------------------------------------------------------------------------------
// export

/// ArrayOwner is what an exported array owns: its buffers, the pointer list to them and its
/// children.
struct ArrayOwner {
    _buffers: Vec<Buffer>,
    buffer_ptrs: Vec<*const c_void>,
    children: Vec<*mut ArrowArray>,
}

fn export_array(c: Column) -> Box<ArrowArray> {
    let buffer_ptrs: Vec<*const c_void> = c.buffers.iter().map(Buffer::ptr).collect();
    let children: Vec<*mut ArrowArray> = c
        .children
        .into_iter()
        .map(|ch| Box::into_raw(export_array(ch)))
        .collect();
    let mut owner = Box::new(ArrayOwner {
        _buffers: c.buffers,
        buffer_ptrs,
        children,
    });
    Box::new(ArrowArray {
        length: c.length as i64,
        null_count: c.null_count as i64,
        offset: 0,
        n_buffers: owner.buffer_ptrs.len() as i64,
        n_children: owner.children.len() as i64,
        buffers: owner.buffer_ptrs.as_mut_ptr(),
        children: owner.children.as_mut_ptr(),
        dictionary: ptr::null_mut(),
        release: Some(release_array),
        private_data: Box::into_raw(owner) as *mut c_void,
    })
}

/// release_array is the exported arrays' release callback: it releases the children (unless
/// the importer moved them out) and frees what the array owns.
///
/// # Safety
/// `a` is an array made by [`export_array`] (or moved from one), released at most once.
unsafe extern "C" fn release_array(a: *mut ArrowArray) {
    let Some(a) = a.as_mut() else {
        return;
    };
    if a.release.is_none() {
        return;
    }
    let owner = Box::from_raw(a.private_data as *mut ArrayOwner);
    for &child in &owner.children {
        if let Some(release) = (*child).release {
            release(child);
        }
        drop(Box::from_raw(child));
    }
    drop(owner);
    a.release = None;
}

struct SchemaOwner {
    _format: CString,
    _name: CString,
    children: Vec<*mut ArrowSchema>,
}

fn export_schema(f: Field) -> Box<ArrowSchema> {
    let format = CString::new(f.format).unwrap_or_default();
    let name = CString::new(f.name).unwrap_or_default();
    let children: Vec<*mut ArrowSchema> = f
        .children
        .into_iter()
        .map(|ch| Box::into_raw(export_schema(ch)))
        .collect();
    let mut owner = Box::new(SchemaOwner {
        _format: format,
        _name: name,
        children,
    });
    Box::new(ArrowSchema {
        format: owner._format.as_ptr(),
        name: owner._name.as_ptr(),
        metadata: ptr::null(),
        flags: f.flags,
        n_children: owner.children.len() as i64,
        children: owner.children.as_mut_ptr(),
        dictionary: ptr::null_mut(),
        release: Some(release_schema),
        private_data: Box::into_raw(owner) as *mut c_void,
    })
}

/// release_schema is the exported schemas' release callback (see [`release_array`]).
///
/// # Safety
/// `s` is a schema made by [`export_schema`] (or moved from one), released at most once.
unsafe extern "C" fn release_schema(s: *mut ArrowSchema) {
    let Some(s) = s.as_mut() else {
        return;
    };
    if s.release.is_none() {
        return;
    }
    let owner = Box::from_raw(s.private_data as *mut SchemaOwner);
    for &child in &owner.children {
        if let Some(release) = (*child).release {
            release(child);
        }
        drop(Box::from_raw(child));
    }
    drop(owner);
    s.release = None;
}

/// Exported is an exported array and its schema, to hand to an importer; dropping it releases
/// whatever the importer did not take.
pub struct Exported {
    pub array: Box<ArrowArray>,
    pub schema: Box<ArrowSchema>,
}

// SAFETY: the exported structs own their buffers outright (no shared state); the C Data
// Interface lets them move between threads.
unsafe impl Send for Exported {}

impl Drop for Exported {
    fn drop(&mut self) {
        // SAFETY: both were made by the export functions; an importer that moved them out set
        // their release to None.
        unsafe {
            if let Some(r) = self.array.release {
                r(&mut *self.array);
            }
            if let Some(r) = self.schema.release {
                r(&mut *self.schema);
            }
        }
    }
}

/// export is [`record_batch`] as an [`Exported`].
pub fn export(runs: &[Run]) -> Exported {
    let (array, schema) = record_batch(runs);
    Exported { array, schema }
}
