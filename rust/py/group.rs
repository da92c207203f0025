//! Bindings for the group coordinator (`rust/group/`): `kgroup._native.group`, wrapped by
//! `kgroup.group`.
//!
//! A request goes in as its raw frame (`handle_frame`: the bytes after the size prefix), which
//! Rust decodes once into the api's generated typed message (`group::requests`), or as a
//! `kgroup.protocol.Request` already decoded (`handle`, for tools and tests: its frame is
//! encoded again first). Responses come out as whole frames (size prefix, header of the
//! request's version, its correlation id) written by `group::responses` straight into `bytes`.
//! The binding keeps, per request still to be answered, the host's token object and what the
//! frame needs (api key, version, correlation id).

use std::collections::HashMap;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use super::errors::{to_pyerr, IntoPyResult};
use super::protocol::frame::{PyRequest, PyRequestHeader};
use crate::assignors::fxhash::FxMap;
use crate::errors::{Error, ErrorCode};
use crate::group::{
    requests, responses, Config, Coordinator, Effect, GroupConfig, GroupResponse, ShareEffect,
};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCoordinator>()?;
    m.add_class::<PyRespond>()?;
    m.add_class::<PyAppend>()?;
    m.add_class::<PyInitializeShareState>()?;
    m.add_class::<PyDeleteShareState>()?;
    m.add(
        "CONFIG_KEYS",
        Config::KEYS
            .iter()
            .chain(Config::SHARE_KEYS)
            .chain(Config::TEXT_KEYS)
            .copied()
            .collect::<Vec<_>>(),
    )?;
    m.add("GROUP_CONFIG_KEYS", GroupConfig::KEYS.to_vec())?;
    m.add("GROUP_API_KEYS", requests::GROUP_API_KEYS.to_vec())?;
    m.add_function(wrap_pyfunction!(partition_for, m)?)?;
    m.add_function(wrap_pyfunction!(assign_consumer_group, m)?)?;
    Ok(())
}

/// Respond is an effect: write `frame` (a whole response frame) to the connection of the request
/// the host handed in with `token`.
#[pyclass(frozen, name = "Respond", module = "kgroup.group")]
pub struct PyRespond {
    #[pyo3(get)]
    token: Py<PyAny>,
    #[pyo3(get)]
    frame: Py<PyBytes>,
}

#[pymethods]
impl PyRespond {
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) {
        ("token", "frame")
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Respond(token={}, frame=<{} bytes>)",
            self.token.bind(py).repr()?,
            self.frame.bind(py).as_bytes().len()
        ))
    }
}

/// Append is an effect: append `records` (one v2 record batch) to partition `partition` of
/// `__consumer_offsets`, then report the outcome with `Coordinator.appended(now_ms, token,
/// error_code)`.
#[pyclass(frozen, name = "Append", module = "kgroup.group")]
pub struct PyAppend {
    #[pyo3(get)]
    token: u64,
    #[pyo3(get)]
    partition: i32,
    #[pyo3(get)]
    records: Py<PyBytes>,
}

#[pymethods]
impl PyAppend {
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str) {
        ("token", "partition", "records")
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Append(token={}, partition={}, records=<{} bytes>)",
            self.token,
            self.partition,
            self.records.bind(py).as_bytes().len()
        )
    }
}

/// InitializeShareState is an effect of a share group (KIP-932): create the share state of
/// `partitions` of topic `topic_id` (16 bytes) for group `group_id`, at state epoch
/// `state_epoch`, then report it with `Coordinator.share_state_initialized` (or
/// `share_state_initialize_failed`). It may come again for the same partitions.
#[pyclass(frozen, name = "InitializeShareState", module = "kgroup.group")]
pub struct PyInitializeShareState {
    #[pyo3(get)]
    group_id: String,
    #[pyo3(get)]
    topic_id: Py<PyBytes>,
    #[pyo3(get)]
    partitions: Vec<i32>,
    #[pyo3(get)]
    state_epoch: i32,
}

#[pymethods]
impl PyInitializeShareState {
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str, &'static str) {
        ("group_id", "topic_id", "partitions", "state_epoch")
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "InitializeShareState(group_id={:?}, topic_id={}, partitions={:?}, state_epoch={})",
            self.group_id,
            hex(self.topic_id.bind(py).as_bytes()),
            self.partitions,
            self.state_epoch
        )
    }
}

/// DeleteShareState is an effect of a share group being deleted: drop the share state of
/// `partitions` of topic `topic_id` for group `group_id`. Nothing is reported back.
#[pyclass(frozen, name = "DeleteShareState", module = "kgroup.group")]
pub struct PyDeleteShareState {
    #[pyo3(get)]
    group_id: String,
    #[pyo3(get)]
    topic_id: Py<PyBytes>,
    #[pyo3(get)]
    partitions: Vec<i32>,
}

#[pymethods]
impl PyDeleteShareState {
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str) {
        ("group_id", "topic_id", "partitions")
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "DeleteShareState(group_id={:?}, topic_id={}, partitions={:?})",
            self.group_id,
            hex(self.topic_id.bind(py).as_bytes()),
            self.partitions
        )
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn topic_id_from(topic_id: &[u8]) -> PyResult<[u8; 16]> {
    topic_id.try_into().map_err(|_| {
        PyValueError::new_err(format!("a topic id is 16 bytes, not {}", topic_id.len()))
    })
}

/// Waiting is a request whose response is still to come.
struct Waiting {
    token: Py<PyAny>,
    api_key: i16,
    version: i16,
    correlation_id: i32,
}

/// Coordinator is the group coordinator of a broker; see `kgroup.group.Coordinator`.
#[pyclass(name = "Coordinator", module = "kgroup.group")]
pub struct PyCoordinator {
    inner: Coordinator,
    waiting: FxMap<u64, Waiting>,
    next: u64,
    effects: Vec<Effect>,
    /// out is where response frames are written before they become `bytes`.
    out: Vec<u8>,
}

fn config_from(config: Option<&Bound<'_, PyAny>>) -> PyResult<Config> {
    let mut c = Config::default();
    let Some(config) = config else {
        return Ok(c);
    };
    let py = config.py();
    let items = config.call_method0("items")?;
    for item in items.try_iter()? {
        let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let key: String = k
            .extract()
            .map_err(|_| to_pyerr(py, Error::InvalidType(format!("config key {k}: not a str"))))?;
        if let Ok(s) = v.cast::<PyString>() {
            c.set_text(&key, s.to_str()?).py_err(py)?;
        } else if let Ok(list) = v.cast::<PyList>() {
            // A LIST config as the broker holds it: its items, as Kafka's comma-separated text.
            let items: Vec<String> = list
                .iter()
                .map(|x| x.str().map(|s| s.to_string()))
                .collect::<PyResult<_>>()?;
            c.set_text(&key, &items.join(",")).py_err(py)?;
        } else {
            let value: i64 = v.extract().map_err(|_| {
                to_pyerr(
                    py,
                    Error::InvalidType(format!("{key}: {v} is not an integer")),
                )
            })?;
            c.set(&key, value).py_err(py)?;
        }
    }
    c.validate().py_err(py)?;
    Ok(c)
}

fn response_frame<'py>(
    py: Python<'py>,
    out: &mut Vec<u8>,
    response: &GroupResponse,
    version: i16,
    correlation_id: i32,
) -> PyResult<Bound<'py, PyBytes>> {
    out.clear();
    responses::write_frame(response, version, correlation_id, out).py_err(py)?;
    Ok(PyBytes::new(py, out))
}

impl PyCoordinator {
    /// effects turns the core's effects into Python objects, writing response frames.
    fn effects<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for e in self.effects.drain(..) {
            match e {
                Effect::Respond { token, response } => {
                    let Some(w) = self.waiting.remove(&token) else {
                        continue;
                    };
                    debug_assert_eq!(w.api_key, response.api_key());
                    let frame =
                        response_frame(py, &mut self.out, &response, w.version, w.correlation_id)?;
                    list.append(Bound::new(
                        py,
                        PyRespond {
                            token: w.token,
                            frame: frame.unbind(),
                        },
                    )?)?;
                }
                Effect::Append {
                    token,
                    partition,
                    records,
                } => {
                    list.append(Bound::new(
                        py,
                        PyAppend {
                            token,
                            partition,
                            records: PyBytes::new(py, &records).unbind(),
                        },
                    )?)?;
                }
                Effect::Other(ShareEffect::InitializeShareState {
                    group_id,
                    topic_id,
                    partitions,
                    state_epoch,
                }) => {
                    list.append(Bound::new(
                        py,
                        PyInitializeShareState {
                            group_id,
                            topic_id: PyBytes::new(py, &topic_id).unbind(),
                            partitions,
                            state_epoch,
                        },
                    )?)?;
                }
                Effect::Other(ShareEffect::DeleteShareState {
                    group_id,
                    topic_id,
                    partitions,
                }) => {
                    list.append(Bound::new(
                        py,
                        PyDeleteShareState {
                            group_id,
                            topic_id: PyBytes::new(py, &topic_id).unbind(),
                            partitions,
                        },
                    )?)?;
                }
            }
        }
        Ok(list)
    }
}

#[pymethods]
impl PyCoordinator {
    #[new]
    #[pyo3(signature = (config=None, *, seed=None))]
    fn new(config: Option<&Bound<'_, PyAny>>, seed: Option<u64>) -> PyResult<Self> {
        let config = config_from(config)?;
        Ok(PyCoordinator {
            inner: match seed {
                Some(s) => Coordinator::with_seed(config, s),
                None => Coordinator::new(config),
            },
            waiting: FxMap::default(),
            next: 1,
            effects: Vec::new(),
            out: Vec::new(),
        })
    }

    /// handle_frame(now_ms, token, frame, client_host="") -> list[Respond | Append]
    #[pyo3(signature = (now_ms, token, frame, client_host=""))]
    fn handle_frame<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        token: Py<PyAny>,
        frame: &[u8],
        client_host: &str,
    ) -> PyResult<Bound<'py, PyList>> {
        let (header, input) = requests::decode(frame, client_host).py_err(py)?;
        let internal = self.next;
        self.next += 1;
        self.inner
            .handle_into(now_ms, internal, &input, &mut self.effects);
        self.waiting.insert(
            internal,
            Waiting {
                token,
                api_key: header.api_key,
                version: header.version,
                correlation_id: header.correlation_id,
            },
        );
        self.effects(py)
    }

    /// handle(now_ms, token, request, client_host="") -> list[Respond | Append]
    #[pyo3(signature = (now_ms, token, request, client_host=""))]
    fn handle<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        token: Py<PyAny>,
        request: &Bound<'py, PyAny>,
        client_host: &str,
    ) -> PyResult<Bound<'py, PyList>> {
        let req = request.cast::<PyRequest>().map_err(|_| {
            PyTypeError::new_err("request must be a kgroup.protocol.Request (from decode_request)")
        })?;
        let header: &PyRequestHeader = req.as_super().get();
        let (api_key, version, correlation_id, client_id) = header.parts();
        if !requests::is_group_api(api_key) {
            return Err(to_pyerr(
                py,
                Error::InvalidArgument(format!(
                    "api key {api_key} is not served by the group coordinator"
                )),
            ));
        }
        // The request's frame again (a body built by hand, or a view): decoded as the broker's.
        let encode = py
            .import("kgroup._native.protocol")?
            .getattr("encode_request")?;
        let body = req.get().body_object().bind(py);
        let frame = encode.call1((api_key, version, correlation_id, client_id, body))?;
        let frame = frame.cast::<PyBytes>()?.as_bytes();
        self.handle_frame(py, now_ms, token, &frame[4..], client_host)
    }

    /// appended(now_ms, token, error_code=0) -> list[Respond | Append]
    #[pyo3(signature = (now_ms, token, error_code=0))]
    fn appended<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        token: u64,
        error_code: i16,
    ) -> PyResult<Bound<'py, PyList>> {
        let error = ErrorCode::for_code(error_code);
        self.inner
            .appended_into(now_ms, token, error, &mut self.effects)
            .py_err(py)?;
        self.effects(py)
    }

    /// end_transaction(now_ms, partition, producer_id, commit) -> list[Respond | Append]
    fn end_transaction<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        partition: i32,
        producer_id: i64,
        commit: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let e = self
            .inner
            .end_transaction(now_ms, partition, producer_id, commit);
        self.effects.extend(e);
        self.effects(py)
    }

    /// tick(now_ms) -> list[Respond | Append]
    fn tick<'py>(&mut self, py: Python<'py>, now_ms: i64) -> PyResult<Bound<'py, PyList>> {
        self.inner.tick_into(now_ms, &mut self.effects);
        self.effects(py)
    }

    /// The time (ms) the next timer is due at, or None.
    #[getter]
    fn next_deadline(&mut self) -> Option<i64> {
        self.inner.next_deadline()
    }

    /// load(partition, batches, last=True) -> dict[str, int]
    #[pyo3(signature = (partition, batches, last=true))]
    fn load<'py>(
        &mut self,
        py: Python<'py>,
        partition: i32,
        batches: &[u8],
        last: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let inner = &mut self.inner;
        let stats = py
            .detach(|| inner.load(partition, batches, last))
            .py_err(py)?;
        let d = PyDict::new(py);
        d.set_item("batches", stats.batches)?;
        d.set_item("records", stats.records)?;
        d.set_item("unknown", stats.unknown)?;
        d.set_item("groups", stats.groups)?;
        Ok(d)
    }

    /// unload(now_ms, partition) -> list[Respond | Append]
    fn unload<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        partition: i32,
    ) -> PyResult<Bound<'py, PyList>> {
        let e = self.inner.unload(now_ms, partition);
        self.effects.extend(e);
        self.effects(py)
    }

    /// set_topics(topics) -> None
    fn set_topics(&mut self, topics: Option<HashMap<String, i32>>) {
        match topics {
            Some(t) => self
                .inner
                .set_topics(Some(t.iter().map(|(k, v)| (k.as_str(), *v)))),
            None => self.inner.set_topics(None::<Vec<(&str, i32)>>),
        }
    }

    /// set_group_config(group_id, configs) -> None
    ///
    /// configs: the group's dynamic configs the coordinator reads (GROUP_CONFIG_KEYS, Kafka's
    /// names) to their values, validated by the host; those left out take the broker's again.
    /// Read at the group's next heartbeat. An unknown name raises InvalidArgument.
    fn set_group_config(
        &mut self,
        py: Python<'_>,
        group_id: &str,
        configs: HashMap<String, i64>,
    ) -> PyResult<()> {
        let mut c = GroupConfig::default();
        for (k, v) in &configs {
            c.set(k, *v).py_err(py)?;
        }
        self.inner.set_group_config(group_id, c);
        Ok(())
    }

    /// set_topic_metadata(topics) -> None
    ///
    /// topics: (name, 16-byte topic id, partition count) for every topic of the broker. Consumer
    /// groups resolve subscribed names through them; commits are checked against them as
    /// set_topics does. A topic id of another length raises ValueError.
    fn set_topic_metadata(&mut self, topics: Vec<(String, Vec<u8>, i32)>) -> PyResult<()> {
        let mut meta = Vec::with_capacity(topics.len());
        for (name, id, partitions) in &topics {
            let id: [u8; 16] = id.as_slice().try_into().map_err(|_| {
                PyValueError::new_err(format!(
                    "topic {name:?}: a topic id is 16 bytes, not {}",
                    id.len()
                ))
            })?;
            meta.push((name.as_str(), id, *partitions));
        }
        self.inner.set_topic_metadata(meta);
        Ok(())
    }

    /// topics_deleted(now_ms, topics) -> list[Respond | Append]
    fn topics_deleted<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        topics: Vec<String>,
    ) -> PyResult<Bound<'py, PyList>> {
        let e = self
            .inner
            .topics_deleted(now_ms, topics.iter().map(String::as_str));
        self.effects.extend(e);
        self.effects(py)
    }

    /// share_state_initialized(now_ms, group_id, topic_id, partitions) -> list[Effect]: the
    /// host created the share state an InitializeShareState asked for.
    fn share_state_initialized<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        group_id: &str,
        topic_id: &[u8],
        partitions: Vec<i32>,
    ) -> PyResult<Bound<'py, PyList>> {
        let id = topic_id_from(topic_id)?;
        let e = self
            .inner
            .share_state_initialized(now_ms, group_id, id, &partitions);
        self.effects.extend(e);
        self.effects(py)
    }

    /// share_state_initialize_failed(now_ms, group_id, topic_id, partitions) -> list[Effect]:
    /// the host could not create that share state; the group's next heartbeat asks again.
    fn share_state_initialize_failed<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        group_id: &str,
        topic_id: &[u8],
        partitions: Vec<i32>,
    ) -> PyResult<Bound<'py, PyList>> {
        let id = topic_id_from(topic_id)?;
        let e = self
            .inner
            .share_state_initialize_failed(now_ms, group_id, id, &partitions);
        self.effects.extend(e);
        self.effects(py)
    }

    /// partition_for(group_id) -> int
    fn partition_for(&self, group_id: &str) -> i32 {
        self.inner.partition_for(group_id)
    }

    /// group_state(group_id) -> str | None
    fn group_state(&self, group_id: &str) -> Option<&'static str> {
        self.inner.group_state(group_id).map(|s| s.name())
    }

    /// group_ids() -> list[str]
    fn group_ids(&self) -> Vec<String> {
        self.inner.group_ids()
    }

    /// inspect_group(group_id) -> dict[str, Any] | None
    ///
    /// The group as it stands (see `kgroup.group`): `group_id`, `type` (`classic` or
    /// `consumer`), `state`, `protocol_type`, `protocol`, `generation`, `assignment_epoch`,
    /// `members`, each a dict of `member_id`, `group_instance_id`, `client_id`,
    /// `client_host`, `subscription` (sorted topic names), `subscribed_regex`, `assignment`
    /// and `target` ({topic: [partitions ascending]}), `member_epoch`.
    fn inspect_group<'py>(
        &self,
        py: Python<'py>,
        group_id: &str,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(v) = self.inner.inspect_group(group_id) else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("group_id", &v.group_id)?;
        d.set_item("type", v.kind.name())?;
        d.set_item("state", v.state)?;
        d.set_item("protocol_type", &v.protocol_type)?;
        d.set_item("protocol", &v.protocol)?;
        d.set_item("generation", v.generation)?;
        d.set_item("assignment_epoch", v.assignment_epoch)?;
        let members = PyList::empty(py);
        for m in &v.members {
            let md = PyDict::new(py);
            md.set_item("member_id", &m.member_id)?;
            md.set_item("group_instance_id", &m.group_instance_id)?;
            md.set_item("client_id", &m.client_id)?;
            md.set_item("client_host", &m.client_host)?;
            md.set_item("subscription", &m.subscription)?;
            md.set_item("subscribed_regex", &m.subscribed_regex)?;
            md.set_item("assignment", &m.assignment)?;
            md.set_item("target", &m.target)?;
            md.set_item("member_epoch", m.member_epoch)?;
            members.append(md)?;
        }
        d.set_item("members", members)?;
        Ok(Some(d))
    }

    /// committed_offsets(group_id) -> list[tuple[str, int, int, int, str]] | None
    ///
    /// The group's stable committed offsets as (topic, partition, offset, leader_epoch,
    /// metadata), by topic then partition; None when the coordinator has no such group.
    fn committed_offsets(&self, group_id: &str) -> Option<Vec<CommittedRow>> {
        self.inner.committed_offsets(group_id).map(|all| {
            all.into_iter()
                .map(|(t, p, o)| (t, p, o.offset, o.leader_epoch, o.metadata.to_string()))
                .collect()
        })
    }

    /// expire_member(now_ms, group_id, member_id=None) -> list[Respond | Append]
    ///
    /// Ends the member's session (every member's, when None) as its session timer would.
    /// Raises GroupIdNotFound, UnknownMemberId, NotCoordinator or CoordinatorLoadInProgress.
    #[pyo3(signature = (now_ms, group_id, member_id=None))]
    fn expire_member<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        group_id: &str,
        member_id: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        let e = self
            .inner
            .expire_member(now_ms, group_id, member_id)
            .py_err(py)?;
        self.effects.extend(e);
        self.effects(py)
    }

    #[getter]
    fn group_count(&self) -> usize {
        self.inner.group_count()
    }

    #[getter]
    fn pending_appends(&self) -> usize {
        self.inner.pending_appends()
    }

    /// Requests handed in and not answered yet.
    #[getter]
    fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

/// CommittedRow is one committed offset as `committed_offsets` answers it: topic, partition,
/// offset, leader epoch, metadata.
type CommittedRow = (String, i32, i64, i32, String);

/// partition_for(group_id, partitions=50) -> int
#[pyfunction]
#[pyo3(signature = (group_id, partitions=50))]
fn partition_for(py: Python<'_>, group_id: &str, partitions: i32) -> PyResult<i32> {
    if partitions < 1 {
        return Err(to_pyerr(
            py,
            Error::InvalidArgument(format!("partitions must be at least 1, got {partitions}")),
        ));
    }
    Ok(crate::group::partition_for(group_id, partitions))
}

/// ServerMember is one member as `assign_consumer_group` takes it: member id, instance id, rack
/// id, subscribed topic ids, previous target (topic id to partitions).
type ServerMember = (
    String,
    Option<String>,
    Option<String>,
    Vec<String>,
    HashMap<String, Vec<i32>>,
);

/// assign_consumer_group(assignor, members, partition_counts, subscription_type=None)
///     -> list[dict[str, list[int]]]
///
/// Runs a KIP-848 server-side assignor (`uniform` or `range`) on a group as the coordinator
/// would: `members` in the order the assignor walks them, each `(member_id, instance_id,
/// rack_id, subscribed_topic_ids, target)`, topic ids in Kafka's base64 text form;
/// `partition_counts` maps topic ids to their partition counts (a subscribed topic missing from
/// it fails the assignment, as a topic missing from Kafka's metadata). `subscription_type` is
/// "Homogeneous" or "Heterogeneous", computed from the subscriptions when None. Answers one
/// assignment per member, in order, partitions ascending. An assignor failure (Kafka's
/// `PartitionAssignorException`) raises `kgroup.errors.UnknownServerError`, what the coordinator
/// answers, with the assignor's message.
#[pyfunction]
#[pyo3(signature = (assignor, members, partition_counts, subscription_type=None))]
fn assign_consumer_group(
    py: Python<'_>,
    assignor: &str,
    members: Vec<ServerMember>,
    partition_counts: HashMap<String, i32>,
    subscription_type: Option<&str>,
) -> PyResult<Vec<HashMap<String, Vec<i32>>>> {
    use crate::group::assignors::{by_name, uuid, Assignment, GroupSpec, MemberSpec};
    use crate::group::assignors::{SubscriptionType, TopicId};
    use std::collections::{BTreeMap, BTreeSet};

    let invalid = |msg: String| to_pyerr(py, Error::InvalidArgument(msg));
    let Some(server) = by_name(assignor) else {
        return Err(invalid(format!("no server-side assignor {assignor:?}")));
    };
    let id = |text: &str| {
        uuid::parse(text).ok_or_else(|| invalid(format!("not a Kafka topic id: {text:?}")))
    };
    let mut counts: BTreeMap<TopicId, i32> = BTreeMap::new();
    for (topic, n) in &partition_counts {
        counts.insert(id(topic)?, *n);
    }
    let mut subscriptions: Vec<BTreeSet<TopicId>> = Vec::with_capacity(members.len());
    let mut targets: Vec<Assignment> = Vec::with_capacity(members.len());
    for (_, _, _, topics, target) in &members {
        subscriptions.push(topics.iter().map(|t| id(t)).collect::<PyResult<_>>()?);
        let mut parts = Vec::with_capacity(target.len());
        for (topic, ps) in target {
            parts.push((id(topic)?, ps.clone()));
        }
        targets.push(parts.into_iter().collect());
    }
    let kind = match subscription_type {
        None => SubscriptionType::of(subscriptions.iter()),
        Some("Homogeneous") => SubscriptionType::Homogeneous,
        Some("Heterogeneous") => SubscriptionType::Heterogeneous,
        Some(other) => return Err(invalid(format!("no subscription type {other:?}"))),
    };
    let spec = GroupSpec::new(
        members
            .iter()
            .zip(&subscriptions)
            .zip(&targets)
            .map(
                |(((member_id, instance_id, rack_id, _, _), topics), target)| MemberSpec {
                    member_id,
                    instance_id: instance_id.as_deref(),
                    rack_id: rack_id.as_deref(),
                    subscribed_topic_ids: topics,
                    target,
                },
            )
            .collect(),
        kind,
    );
    let out = server
        .assign(&spec, &counts)
        .map_err(|e| to_pyerr(py, Error::kafka(ErrorCode::UnknownServerError, e.message())))?;
    Ok(out
        .into_iter()
        .map(|a| {
            a.into_map()
                .into_iter()
                .map(|(t, ps)| (uuid::format(&t), ps))
                .collect()
        })
        .collect())
}
