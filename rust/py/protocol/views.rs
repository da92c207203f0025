//! Views: decoded bodies as light, read-only Python objects over the Rust value tree.
//!
//! Decoding builds the whole value tree in Rust (every byte read and checked, with the GIL
//! released); a view then turns a field into a Python value only when it is read. A
//! [`StructView`] behaves as a read-only mapping of the version's field names (`body["topics"]`,
//! also `body.topics`), an [`ArrayView`] as a read-only sequence of struct views; arrays of
//! scalars are plain lists. `to_dict()` / `to_list()` build plain dicts and lists for the whole
//! subtree, and a view compares equal to the plain value it stands for. Encoding a view of the
//! same message writes its tree directly.

use std::sync::Arc;

use pyo3::exceptions::{PyAttributeError, PyIndexError, PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PySlice, PyString};

use super::convert::{
    int_list, keys, list_of, names_of, scalar_to_py, tagged_to_py, GcPause, Materialize,
    UNKNOWN_TAGGED,
};
use crate::errors::Result;
use crate::protocol::schema::{Field, Message, Type};
use crate::protocol::value::{Arena, Struct, Value};

/// Owner holds the bytes a tree was decoded from: a `bytes` object (read in place: it is
/// immutable) or a copy of any other buffer.
pub(super) enum Owner {
    Bytes(Py<PyBytes>),
    Copied(Box<[u8]>),
}

/// Decoded is a decoded body together with the arena that holds its values and the frame its
/// strings and bytes borrow from.
pub(super) struct Decoded {
    // Declared before `_arena` and `_owner` so that it is dropped first: it borrows both.
    body: Struct<'static>,
    pub msg: &'static Message,
    pub version: i16,
    _arena: Held,
    _owner: Owner,
}

/// Held keeps a decoded tree's arena alive until the tree is dropped.
struct Held(#[allow(dead_code)] Box<Arena<'static>>);
// SAFETY: an Arena is not Sync only because allocating from it mutates it through a shared
// reference. Once decoding is done nothing allocates from a Held arena again: it is only kept,
// then dropped, and the values in it are read-only (see Node).
unsafe impl Sync for Held {}

impl Decoded {
    /// decode reads `owner`'s bytes with `f`, with the GIL released, and keeps both the bytes
    /// and the tree that borrows them. `f` returns extra results (a header), the message and the
    /// version read, and the body.
    pub(super) fn decode<T, F>(py: Python<'_>, owner: Owner, f: F) -> PyResult<(T, Arc<Decoded>)>
    where
        T: Send,
        F: for<'a> FnOnce(
                &'a [u8],
                &'a Arena<'a>,
            ) -> Result<(T, &'static Message, i16, Struct<'a>)>
            + Send,
    {
        let (ptr, len) = match &owner {
            Owner::Bytes(b) => {
                let s = b.bind(py).as_bytes();
                (s.as_ptr(), s.len())
            }
            Owner::Copied(v) => (v.as_ptr(), v.len()),
        };
        // SAFETY: the bytes belong to `owner` (an immutable Python bytes object, or a boxed
        // slice that is never changed), whose heap memory does not move when `owner` does. The
        // tree that borrows them is stored in the same Decoded and dropped before the owner,
        // and no borrow with this 'static lifetime ever leaves the Decoded: views hand out
        // borrows tied to their own reference to it.
        let data: &'static [u8] = unsafe { std::slice::from_raw_parts(ptr, len) };
        let (arena, decoded) = py.detach(|| {
            let arena = Box::new(Arena::for_bytes(len));
            // SAFETY: as for `data`: the arena lives on the heap, does not move when the box
            // does, and is kept in the same Decoded as the tree, dropped after it.
            let shared: &'static Arena<'static> = unsafe { &*(&*arena as *const Arena<'static>) };
            let decoded = f(data, shared);
            (arena, decoded)
        });
        let (extra, msg, version, body) =
            decoded.map_err(|e| super::super::errors::to_pyerr(py, e))?;
        Ok((
            extra,
            Arc::new(Decoded {
                body,
                msg,
                version,
                _arena: Held(arena),
                _owner: owner,
            }),
        ))
    }

    pub(super) fn body(&self) -> &Struct<'static> {
        &self.body
    }
}

/// Node points to a struct inside a Decoded tree.
#[derive(Clone, Copy)]
struct Node(*const Struct<'static>);
// SAFETY: the tree is never changed after decoding and is kept alive by the Arc<Decoded> that
// every holder of a Node also holds.
unsafe impl Send for Node {}
unsafe impl Sync for Node {}

/// Items points to an array's elements inside a Decoded tree.
#[derive(Clone, Copy)]
struct Items(*const [Value<'static>]);
// SAFETY: as for Node.
unsafe impl Send for Items {}
unsafe impl Sync for Items {}

/// StructView is a read-only mapping over one decoded struct: field names (of the version
/// decoded) to values. Thread-safe: the tree under it never changes.
#[pyclass(frozen, name = "StructView", module = "kgroup.protocol")]
pub struct StructView {
    root: Arc<Decoded>,
    node: Node,
    fields: &'static [Field],
}

/// ArrayView is a read-only sequence over a decoded array of structs.
#[pyclass(frozen, sequence, name = "ArrayView", module = "kgroup.protocol")]
pub struct ArrayView {
    root: Arc<Decoded>,
    items: Items,
    fields: &'static [Field],
}

/// view_of makes the view of a whole body.
pub(super) fn body_view(py: Python<'_>, root: Arc<Decoded>) -> PyResult<Bound<'_, StructView>> {
    let node = Node(root.body() as *const Struct<'static>);
    let fields = root.msg.fields;
    Bound::new(py, StructView { root, node, fields })
}

fn value_to_py<'py>(
    py: Python<'py>,
    root: &Arc<Decoded>,
    v: &Value<'static>,
    f: &'static Field,
) -> PyResult<Bound<'py, PyAny>> {
    match v {
        Value::Struct(s) => Ok(Bound::new(
            py,
            StructView {
                root: root.clone(),
                node: Node(s as *const _),
                fields: f.fields,
            },
        )?
        .into_any()),
        Value::Int32s(_) | Value::Int64s(_) => Ok(int_list(py, v)?.into_any()),
        Value::Array(items) if f.element() == Type::Struct => {
            let items = Items(&items[..] as *const [Value<'static>]);
            Ok(Bound::new(
                py,
                ArrayView {
                    root: root.clone(),
                    items,
                    fields: f.fields,
                },
            )?
            .into_any())
        }
        Value::Array(items) => {
            Ok(list_of(py, items.len(), items.iter().map(|i| scalar_to_py(py, i)))?.into_any())
        }
        v => scalar_to_py(py, v),
    }
}

impl StructView {
    pub(super) fn node(&self) -> *const Struct<'static> {
        self.node.0
    }

    pub(super) fn fields(&self) -> &'static [Field] {
        self.fields
    }

    fn tree(&self) -> &Struct<'static> {
        // SAFETY: see Node; `self.root` keeps the tree alive.
        unsafe { &*self.node.0 }
    }

    fn present(&self) -> impl Iterator<Item = (usize, &'static Field)> + '_ {
        let version = self.root.version;
        self.fields
            .iter()
            .enumerate()
            .filter(move |(_, f)| f.versions.contains(version))
    }

    fn lookup<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        if let Some((i, f)) = self.present().find(|(_, f)| f.name == name) {
            return value_to_py(py, &self.root, &self.tree().fields[i], f).map(Some);
        }
        if name == UNKNOWN_TAGGED && !self.tree().unknown_tagged.is_empty() {
            return Ok(Some(
                tagged_to_py(py, &self.tree().unknown_tagged)?.into_any(),
            ));
        }
        Ok(None)
    }

    fn names<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyString>> {
        let interned = names_of(keys(py), self.fields);
        let mut out: Vec<_> = self
            .present()
            .filter_map(|(i, _)| interned.get(i).map(|n| n.bind(py).clone()))
            .collect();
        if !self.tree().unknown_tagged.is_empty() {
            out.push(PyString::new(py, UNKNOWN_TAGGED));
        }
        out
    }

    fn materialize<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let _pause = GcPause::new(py);
        Materialize {
            py,
            keys: keys(py),
            version: self.root.version,
        }
        .structure(self.tree(), self.fields)
    }
}

#[pymethods]
impl StructView {
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let name = key
            .cast::<PyString>()
            .map_err(|_| PyKeyError::new_err(key.clone().unbind()))?
            .to_str()?;
        self.lookup(py, name)?
            .ok_or_else(|| PyKeyError::new_err(name.to_string()))
    }

    fn __getattr__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.lookup(py, name)?.ok_or_else(|| {
            PyAttributeError::new_err(format!(
                "{} v{} has no field {name:?}",
                self.root.msg.name, self.root.version
            ))
        })
    }

    #[pyo3(signature = (key, default=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let found = match key.cast::<PyString>() {
            Ok(s) => self.lookup(py, s.to_str()?)?,
            Err(_) => None,
        };
        Ok(found.unwrap_or_else(|| default.unwrap_or_else(|| py.None().into_bound(py))))
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(s) = key.cast::<PyString>() else {
            return Ok(false);
        };
        let name = s.to_str()?;
        Ok(self.present().any(|(_, f)| f.name == name)
            || (name == UNKNOWN_TAGGED && !self.tree().unknown_tagged.is_empty()))
    }

    fn __len__(&self) -> usize {
        self.present().count() + usize::from(!self.tree().unknown_tagged.is_empty())
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyList::new(py, self.names(py))?
            .into_any()
            .try_iter()
            .map(Bound::into_any)
    }

    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.names(py))
    }

    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut out = Vec::new();
        for name in self.names(py) {
            out.push(
                self.lookup(py, name.to_str()?)?
                    .unwrap_or_else(|| py.None().into_bound(py)),
            );
        }
        PyList::new(py, out)
    }

    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut out = Vec::new();
        for name in self.names(py) {
            let v = self
                .lookup(py, name.to_str()?)?
                .unwrap_or_else(|| py.None().into_bound(py));
            out.push((name, v));
        }
        PyList::new(py, out)
    }

    /// to_dict() -> dict: the whole struct as plain dicts and lists.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.materialize(py)
    }

    /// message is Kafka's name of the message this view belongs to (`JoinGroupRequest`).
    #[getter]
    fn message(&self) -> &'static str {
        self.root.msg.name
    }

    /// version is the version the message was decoded at.
    #[getter]
    fn version(&self) -> i16 {
        self.root.version
    }

    fn __richcmp__<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyAny>,
        op: pyo3::basic::CompareOp,
    ) -> PyResult<Bound<'py, PyAny>> {
        use pyo3::basic::CompareOp;
        let eq = match other.cast::<StructView>() {
            Ok(o)
                if std::ptr::eq(o.get().fields, self.fields)
                    && o.get().root.version == self.root.version =>
            {
                o.get().tree() == self.tree()
            }
            _ => {
                let mapping =
                    other.is_instance_of::<PyDict>() || other.hasattr("keys").unwrap_or(false);
                if !mapping {
                    return Ok(py.NotImplemented().into_bound(py));
                }
                self.materialize(py)?.eq(other)?
            }
        };
        match op {
            CompareOp::Eq => Ok(pyo3::types::PyBool::new(py, eq).to_owned().into_any()),
            CompareOp::Ne => Ok(pyo3::types::PyBool::new(py, !eq).to_owned().into_any()),
            _ => Ok(py.NotImplemented().into_bound(py)),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "{}({})",
            self.root.msg.name,
            self.materialize(py)?.repr()?
        ))
    }
}

impl ArrayView {
    pub(super) fn items(&self) -> *const [Value<'static>] {
        self.items.0
    }

    pub(super) fn fields(&self) -> &'static [Field] {
        self.fields
    }

    fn slice(&self) -> &[Value<'static>] {
        // SAFETY: see Items; `self.root` keeps the tree alive.
        unsafe { &*self.items.0 }
    }

    fn element<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyAny>> {
        match self.slice().get(i) {
            Some(Value::Struct(s)) => Ok(Bound::new(
                py,
                StructView {
                    root: self.root.clone(),
                    node: Node(s as *const _),
                    fields: self.fields,
                },
            )?
            .into_any()),
            Some(_) => Err(PyTypeError::new_err("array element is not a struct")),
            None => Err(PyIndexError::new_err("array index out of range")),
        }
    }

    fn materialize<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let _pause = GcPause::new(py);
        let m = Materialize {
            py,
            keys: keys(py),
            version: self.root.version,
        };
        list_of(
            py,
            self.slice().len(),
            self.slice().iter().map(|v| match v {
                Value::Struct(s) => m.structure(s, self.fields).map(Bound::into_any),
                v => scalar_to_py(py, v),
            }),
        )
    }
}

#[pymethods]
impl ArrayView {
    fn __len__(&self) -> usize {
        self.slice().len()
    }

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        index: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = self.slice().len();
        if let Ok(slice) = index.cast::<PySlice>() {
            let ind = slice.indices(n as isize)?;
            let mut out = Vec::with_capacity(ind.slicelength);
            let mut i = ind.start;
            for _ in 0..ind.slicelength {
                out.push(self.element(py, i as usize)?);
                i += ind.step;
            }
            return Ok(PyList::new(py, out)?.into_any());
        }
        let i: isize = index.extract()?;
        let i = if i < 0 { i + n as isize } else { i };
        if i < 0 || i as usize >= n {
            return Err(PyIndexError::new_err("array index out of range"));
        }
        self.element(py, i as usize)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let items = (0..self.slice().len())
            .map(|i| self.element(py, i))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)?
            .into_any()
            .try_iter()
            .map(Bound::into_any)
    }

    /// to_list() -> list: the whole array as plain dicts and lists.
    fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.materialize(py)
    }

    fn __richcmp__<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyAny>,
        op: pyo3::basic::CompareOp,
    ) -> PyResult<Bound<'py, PyAny>> {
        use pyo3::basic::CompareOp;
        let eq = match other.cast::<ArrayView>() {
            Ok(o)
                if std::ptr::eq(o.get().fields, self.fields)
                    && o.get().root.version == self.root.version =>
            {
                o.get().slice() == self.slice()
            }
            _ => {
                if !(other.is_instance_of::<PyList>()
                    || other.is_instance_of::<pyo3::types::PyTuple>())
                {
                    return Ok(py.NotImplemented().into_bound(py));
                }
                let other = if other.is_instance_of::<PyList>() {
                    other.clone()
                } else {
                    PyList::new(py, other.try_iter()?.collect::<PyResult<Vec<_>>>()?)?.into_any()
                };
                self.materialize(py)?.eq(other)?
            }
        };
        match op {
            CompareOp::Eq => Ok(pyo3::types::PyBool::new(py, eq).to_owned().into_any()),
            CompareOp::Ne => Ok(pyo3::types::PyBool::new(py, !eq).to_owned().into_any()),
            _ => Ok(py.NotImplemented().into_bound(py)),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("ArrayView({})", self.materialize(py)?.repr()?))
    }
}
