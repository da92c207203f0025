//! Bindings for the assignors (`kgroup.assignors` wraps these; the ConsumerProtocol payloads
//! are in `consumer_protocol.rs`, behind `kgroup.assignors.consumer_protocol`). `Subscription` and `Assignment` keep their data in
//! Rust, so an assignment runs with the GIL released and without touching Python objects; the
//! `TopicPartition` tuples of a result are only built when `.partitions` is first read.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};

use super::errors::{detached, to_pyerr};

mod consumer_protocol;
use crate::assignors::sticky::StickyAssignor;
use crate::assignors::{self, GroupAssignment, GroupInput, Member, TopicPartition};
use crate::errors::Error;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySubscription>()?;
    m.add_class::<PyAssignment>()?;
    m.add_class::<PyStickyEngine>()?;
    m.add_function(wrap_pyfunction!(assign_range, m)?)?;
    m.add_function(wrap_pyfunction!(assign_round_robin, m)?)?;
    super::submodule(m, "consumer_protocol", consumer_protocol::register)?;
    Ok(())
}

static TOPIC_PARTITION: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn topic_partition_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    TOPIC_PARTITION.import(py, "kgroup.assignors", "TopicPartition")
}

pub(crate) fn invalid_type(py: Python<'_>, msg: String) -> PyErr {
    to_pyerr(py, Error::InvalidType(msg))
}

fn invalid_arg(py: Python<'_>, msg: String) -> PyErr {
    to_pyerr(py, Error::InvalidArgument(msg))
}

pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

fn str_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Arc<str>> {
    match obj.cast::<PyString>() {
        Ok(s) => Ok(Arc::from(s.to_str()?)),
        Err(_) => Err(invalid_type(
            obj.py(),
            format!("{what} must be str, got {}", type_name(obj)),
        )),
    }
}

fn int32_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i32> {
    let v: i64 = obj.extract().map_err(|_| {
        invalid_type(
            obj.py(),
            format!("{what} must be int, got {}", type_name(obj)),
        )
    })?;
    i32::try_from(v)
        .map_err(|_| invalid_arg(obj.py(), format!("{what} {v} is out of the int32 range")))
}

pub(crate) fn bytes_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<Vec<u8>>> {
    if obj.is_none() {
        return Ok(None);
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Some(b.as_bytes().to_vec()));
    }
    match obj.extract::<Vec<u8>>() {
        Ok(v) if !obj.is_instance_of::<PyString>() => Ok(Some(v)),
        _ => Err(invalid_type(
            obj.py(),
            format!("{what} must be bytes or None, got {}", type_name(obj)),
        )),
    }
}

/// topics_of reads an iterable of topic names (a lone str is refused: it would iterate characters).
fn topics_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Arc<str>>> {
    if obj.is_instance_of::<PyString>() {
        return Err(invalid_type(
            obj.py(),
            "topics must be an iterable of str, not a str".into(),
        ));
    }
    let mut out = Vec::new();
    for t in obj.try_iter()? {
        out.push(str_of(&t?, "topic")?);
    }
    Ok(out)
}

/// partitions_of reads an iterable of (topic, partition) pairs; a topic equal to the previous
/// one shares its string.
pub(crate) fn partitions_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<TopicPartition>> {
    let py = obj.py();
    // An Assignment hands over its partitions without building Python objects.
    if let Ok(a) = obj.cast::<PyAssignment>() {
        return Ok(a.get().inner.partitions.clone());
    }
    if obj.is_instance_of::<PyString>() {
        return Err(invalid_type(
            py,
            format!("{what} must be an iterable of (topic, partition) pairs"),
        ));
    }
    let mut out: Vec<TopicPartition> = Vec::new();
    for item in obj.try_iter()? {
        let item = item?;
        let pair = item
            .cast::<PyTuple>()
            .ok()
            .filter(|t| t.len() == 2)
            .ok_or_else(|| {
                invalid_type(
                    py,
                    format!(
                        "{what} must hold (topic, partition) pairs, got {}",
                        type_name(&item)
                    ),
                )
            })?;
        let t = pair.get_item(0)?;
        let ts = t
            .cast::<PyString>()
            .map_err(|_| invalid_type(py, format!("topic must be str, got {}", type_name(&t))))?;
        let name = ts.to_str()?;
        let topic = match out.last() {
            Some(last) if &*last.topic == name => last.topic.clone(),
            _ => Arc::from(name),
        };
        let partition = int32_of(&pair.get_item(1)?, "partition")?;
        out.push(TopicPartition { topic, partition });
    }
    Ok(out)
}

pub(crate) fn partitions_tuple<'py>(
    py: Python<'py>,
    parts: &[TopicPartition],
) -> PyResult<Bound<'py, PyTuple>> {
    let cls = topic_partition_type(py)?;
    let mut last: Option<(&Arc<str>, Bound<'py, PyString>)> = None;
    let mut items = Vec::with_capacity(parts.len());
    for tp in parts {
        let name = match &last {
            Some((t, s)) if Arc::ptr_eq(t, &tp.topic) || **t == tp.topic => s.clone(),
            _ => {
                let s = PyString::new(py, &tp.topic);
                last = Some((&tp.topic, s.clone()));
                s
            }
        };
        items.push(cls.call1((name, tp.partition))?);
    }
    PyTuple::new(py, items)
}

/// UserData is a `user_data` argument: bytes, or None for Java's null. Unlike `Option`, an
/// explicit None is kept apart from "not given" (which defaults to empty bytes).
pub(super) struct UserData(pub Option<Vec<u8>>);

impl<'a, 'py> FromPyObject<'a, 'py> for UserData {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        bytes_of(&obj, "user_data").map(UserData)
    }
}

fn opt_bytes<'py>(py: Python<'py>, b: &Option<Vec<u8>>) -> Option<Bound<'py, PyBytes>> {
    b.as_ref().map(|b| PyBytes::new(py, b))
}

/// Subscription is Java's `ConsumerPartitionAssignor.Subscription`; the data lives in Rust.
#[pyclass(name = "Subscription", module = "kgroup.assignors", frozen)]
pub struct PySubscription {
    pub inner: Arc<assignors::Subscription>,
    owned_cache: PyOnceLock<Py<PyTuple>>,
}

impl PySubscription {
    pub(crate) fn wrap(inner: assignors::Subscription) -> Self {
        PySubscription {
            inner: Arc::new(inner),
            owned_cache: PyOnceLock::new(),
        }
    }
}

#[pymethods]
impl PySubscription {
    #[new]
    #[pyo3(signature = (topics, user_data=UserData(Some(Vec::new())), owned_partitions=None, generation_id=None, rack_id=None, group_instance_id=None))]
    fn new(
        py: Python<'_>,
        topics: &Bound<'_, PyAny>,
        user_data: UserData,
        owned_partitions: Option<&Bound<'_, PyAny>>,
        generation_id: Option<&Bound<'_, PyAny>>,
        rack_id: Option<&Bound<'_, PyAny>>,
        group_instance_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let user_data = user_data.0;
        let owned = match owned_partitions {
            None => Vec::new(),
            Some(o) => partitions_of(o, "owned_partitions")?,
        };
        let opt_str = |o: Option<&Bound<'_, PyAny>>, what: &str| -> PyResult<Option<Arc<str>>> {
            match o {
                Some(v) if !v.is_none() => str_of(v, what).map(Some),
                _ => Ok(None),
            }
        };
        let _ = py;
        Ok(PySubscription::wrap(assignors::Subscription {
            topics: topics_of(topics)?,
            user_data,
            owned_partitions: owned,
            generation_id: match generation_id {
                Some(g) if !g.is_none() => int32_of(g, "generation_id")?.max(-1),
                _ => -1,
            },
            rack_id: opt_str(rack_id, "rack_id")?.filter(|r| !r.is_empty()),
            group_instance_id: opt_str(group_instance_id, "group_instance_id")?,
        }))
    }

    /// The subscribed topics, in the order given.
    #[getter]
    fn topics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.topics.iter().map(|t| &**t))
    }

    /// Assignor-specific bytes; None is Java's null (encoded with length -1).
    #[getter]
    fn user_data<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        opt_bytes(py, &self.inner.user_data)
    }

    /// Partitions the member owns now (protocol v1+, used by cooperative rebalancing).
    #[getter]
    fn owned_partitions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let t = self.owned_cache.get_or_try_init(py, || {
            partitions_tuple(py, &self.inner.owned_partitions).map(Bound::unbind)
        })?;
        Ok(t.bind(py).clone())
    }

    /// The generation the member last joined (protocol v2+); -1 when unknown.
    #[getter]
    fn generation_id(&self) -> i32 {
        self.inner.generation_id
    }

    /// The member's `client.rack` (protocol v3+), None when unset.
    #[getter]
    fn rack_id(&self) -> Option<&str> {
        self.inner.rack_id.as_deref()
    }

    /// The member's `group.instance.id` (static membership); it travels in JoinGroup, not here.
    #[getter]
    fn group_instance_id(&self) -> Option<&str> {
        self.inner.group_instance_id.as_deref()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<PySubscription>() {
            Ok(o) => *self.inner == *o.get().inner,
            Err(_) => false,
        }
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let s = &self.inner;
        s.topics.hash(&mut h);
        s.user_data.hash(&mut h);
        s.owned_partitions.hash(&mut h);
        (s.generation_id, &s.rack_id, &s.group_instance_id).hash(&mut h);
        h.finish()
    }

    fn __repr__(&self) -> String {
        let s = &self.inner;
        let topics: Vec<String> = s.topics.iter().map(|t| format!("{t:?}")).collect();
        let mut out = format!(
            "Subscription(topics=({}{})",
            topics.join(", "),
            if topics.len() == 1 { "," } else { "" }
        );
        match &s.user_data {
            None => out.push_str(", user_data=None"),
            Some(u) if !u.is_empty() => out.push_str(&format!(", user_data=<{} bytes>", u.len())),
            _ => {}
        }
        if !s.owned_partitions.is_empty() {
            out.push_str(&format!(
                ", owned_partitions=<{} partitions>",
                s.owned_partitions.len()
            ));
        }
        if s.generation_id >= 0 {
            out.push_str(&format!(", generation_id={}", s.generation_id));
        }
        if let Some(r) = &s.rack_id {
            out.push_str(&format!(", rack_id={r:?}"));
        }
        if let Some(g) = &s.group_instance_id {
            out.push_str(&format!(", group_instance_id={g:?}"));
        }
        out.push(')');
        out
    }
}

/// Assignment is Java's `ConsumerPartitionAssignor.Assignment`; the data lives in Rust and the
/// `TopicPartition` tuples are built on first access.
#[pyclass(name = "Assignment", module = "kgroup.assignors", frozen)]
pub struct PyAssignment {
    pub inner: assignors::Assignment,
    cache: PyOnceLock<Py<PyTuple>>,
}

impl PyAssignment {
    pub(crate) fn wrap(inner: assignors::Assignment) -> Self {
        PyAssignment {
            inner,
            cache: PyOnceLock::new(),
        }
    }
}

#[pymethods]
impl PyAssignment {
    #[new]
    #[pyo3(signature = (partitions, user_data=UserData(Some(Vec::new()))))]
    fn new(partitions: &Bound<'_, PyAny>, user_data: UserData) -> PyResult<Self> {
        let user_data = user_data.0;
        Ok(PyAssignment::wrap(assignors::Assignment {
            partitions: partitions_of(partitions, "partitions")?,
            user_data,
        }))
    }

    /// The assigned partitions, in the assignor's order (the order they are encoded in).
    #[getter]
    fn partitions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let t = self.cache.get_or_try_init(py, || {
            partitions_tuple(py, &self.inner.partitions).map(Bound::unbind)
        })?;
        Ok(t.bind(py).clone())
    }

    /// Assignor-specific bytes; None is Java's null (what Java's built-in assignors send).
    #[getter]
    fn user_data<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        opt_bytes(py, &self.inner.user_data)
    }

    fn __len__(&self) -> usize {
        self.inner.partitions.len()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<PyAssignment>() {
            Ok(o) => self.inner == o.get().inner,
            Err(_) => false,
        }
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.inner.partitions.hash(&mut h);
        self.inner.user_data.hash(&mut h);
        h.finish()
    }

    fn __repr__(&self) -> String {
        let shown: Vec<String> = self
            .inner
            .partitions
            .iter()
            .take(8)
            .map(|tp| format!("({:?}, {})", tp.topic, tp.partition))
            .collect();
        let more = self.inner.partitions.len().saturating_sub(8);
        let tail = if more > 0 {
            format!(", ... {more} more")
        } else {
            String::new()
        };
        let ud = match &self.inner.user_data {
            None => ", user_data=None".to_string(),
            Some(u) if !u.is_empty() => format!(", user_data=<{} bytes>", u.len()),
            _ => String::new(),
        };
        format!(
            "Assignment(partitions=[{}{}]{})",
            shown.join(", "),
            tail,
            ud
        )
    }
}

/// read_input reads the arguments every assignor takes.
pub(super) fn read_input(
    py: Python<'_>,
    partitions_per_topic: &Bound<'_, PyAny>,
    subscriptions: &Bound<'_, PyAny>,
    partition_racks: Option<&Bound<'_, PyAny>>,
) -> PyResult<GroupInput> {
    let ppt = partitions_per_topic.cast::<PyDict>().map_err(|_| {
        invalid_type(
            py,
            format!(
                "partitions_per_topic must be a dict, got {}",
                type_name(partitions_per_topic)
            ),
        )
    })?;
    let mut counts = Vec::with_capacity(ppt.len());
    for (k, v) in ppt.iter() {
        counts.push((str_of(&k, "topic")?, int32_of(&v, "partition count")?));
    }
    let subs = subscriptions.cast::<PyDict>().map_err(|_| {
        invalid_type(
            py,
            format!(
                "subscriptions must be a dict, got {}",
                type_name(subscriptions)
            ),
        )
    })?;
    let mut members = Vec::with_capacity(subs.len());
    for (k, v) in subs.iter() {
        let id = str_of(&k, "member id")?;
        let s = v.cast::<PySubscription>().map_err(|_| {
            invalid_type(
                py,
                format!(
                    "subscriptions[{id:?}] must be a kgroup Subscription, got {}",
                    type_name(&v)
                ),
            )
        })?;
        members.push(Member {
            id,
            subscription: s.get().inner.clone(),
        });
    }
    let racks = match partition_racks {
        Some(r) if !r.is_none() => {
            let d = r.cast::<PyDict>().map_err(|_| {
                invalid_type(
                    py,
                    format!("partition_racks must be a dict, got {}", type_name(r)),
                )
            })?;
            let mut map: HashMap<TopicPartition, Vec<Arc<str>>> = HashMap::with_capacity(d.len());
            for (k, v) in d.iter() {
                let key = partitions_of(&PyList::new(py, [k])?.into_any(), "partition_racks keys")?
                    .pop()
                    .unwrap();
                map.insert(
                    key,
                    topics_of(&v).map_err(|_| {
                        invalid_type(py, "partition_racks values must be sets of str".into())
                    })?,
                );
            }
            Some(map)
        }
        _ => None,
    };
    Ok(GroupInput {
        partitions_per_topic: counts,
        members,
        partition_racks: racks,
    })
}

/// result_dict turns an assignor's answer into `{member_id: Assignment}` in subscription order.
pub(super) fn result_dict<'py>(
    py: Python<'py>,
    input: &GroupInput,
    out: GroupAssignment,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (m, a) in input.members.iter().zip(out.assignments) {
        d.set_item(&*m.id, Bound::new(py, PyAssignment::wrap(a))?)?;
    }
    Ok(d)
}

/// assign_range runs the range assignor with the GIL released.
#[pyfunction]
#[pyo3(signature = (partitions_per_topic, subscriptions, partition_racks=None))]
fn assign_range<'py>(
    py: Python<'py>,
    partitions_per_topic: &Bound<'py, PyAny>,
    subscriptions: &Bound<'py, PyAny>,
    partition_racks: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let input = read_input(py, partitions_per_topic, subscriptions, partition_racks)?;
    let out = detached(py, || assignors::range::assign(&input))?;
    result_dict(py, &input, out)
}

/// assign_round_robin runs the round-robin assignor with the GIL released.
#[pyfunction]
#[pyo3(signature = (partitions_per_topic, subscriptions, partition_racks=None))]
fn assign_round_robin<'py>(
    py: Python<'py>,
    partitions_per_topic: &Bound<'py, PyAny>,
    subscriptions: &Bound<'py, PyAny>,
    partition_racks: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let _ = partition_racks;
    let input = read_input(py, partitions_per_topic, subscriptions, None)?;
    let out = detached(py, || assignors::round_robin::assign(&input))?;
    result_dict(py, &input, out)
}

/// StickyEngine is one sticky or cooperative-sticky assignor. Like a Java leader's assignor
/// object it remembers the highest generation it has seen (Java's `maxGeneration`).
#[pyclass(name = "StickyEngine", module = "kgroup._native.assignors")]
pub struct PyStickyEngine {
    inner: std::sync::Mutex<StickyAssignor>,
}

#[pymethods]
impl PyStickyEngine {
    #[new]
    #[pyo3(signature = (cooperative, scheduled_rebalance_max_delay_ms=0))]
    fn new(
        py: Python<'_>,
        cooperative: bool,
        scheduled_rebalance_max_delay_ms: i64,
    ) -> PyResult<Self> {
        if scheduled_rebalance_max_delay_ms < 0 {
            return Err(invalid_arg(
                py,
                format!("scheduled_rebalance_max_delay_ms {scheduled_rebalance_max_delay_ms} is negative"),
            ));
        }
        let engine = StickyAssignor::new(cooperative).with_delay(scheduled_rebalance_max_delay_ms);
        Ok(PyStickyEngine {
            inner: std::sync::Mutex::new(engine),
        })
    }

    /// Partitions held back for departed members: `{member_id: (partitions, deadline_ms)}`.
    #[getter]
    fn held_back<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let held = match &self.inner.lock().unwrap_or_else(|e| e.into_inner()).delay {
            Some(d) => d.held_back(),
            None => Vec::new(),
        };
        let d = PyDict::new(py);
        for (member, parts, deadline) in held {
            d.set_item(&*member, (partitions_tuple(py, &parts)?, deadline))?;
        }
        Ok(d)
    }

    /// assign returns `(assignments, transferring, constrained)`: the assignments by member id,
    /// the partitions changing owner as `(TopicPartition, new owner)` pairs, and whether Java's
    /// constrained (equal subscriptions) path ran.
    #[pyo3(signature = (partitions_per_topic, subscriptions, partition_racks=None, now_ms=0))]
    fn assign<'py>(
        &self,
        py: Python<'py>,
        partitions_per_topic: &Bound<'py, PyAny>,
        subscriptions: &Bound<'py, PyAny>,
        partition_racks: Option<&Bound<'py, PyAny>>,
        now_ms: i64,
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyList>, bool)> {
        let input = read_input(py, partitions_per_topic, subscriptions, partition_racks)?;
        let out = detached(py, || {
            let mut engine = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            engine.assign_at(&input, now_ms)
        })?;
        let moving = PyList::empty(py);
        let cls = topic_partition_type(py)?;
        for (tp, m) in &out.transferring {
            moving.append((
                cls.call1((&*tp.topic, tp.partition))?,
                &*input.members[*m].id,
            ))?;
        }
        let constrained = out.constrained;
        Ok((
            result_dict(py, &input, out.assignment)?,
            moving,
            constrained,
        ))
    }

    /// The highest generation seen so far; -1 before any.
    #[getter]
    fn max_generation(&self) -> i32 {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .max_generation
    }
}
