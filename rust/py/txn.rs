//! Bindings for the transaction coordinator (`rust/txn/`): `kgroup._native.txn`, wrapped by
//! `kgroup.txn`.
//!
//! A request goes in as its raw frame (`handle_frame`: the bytes after the size prefix), which
//! Rust decodes once into the api's generated typed message (`txn::requests`); responses come
//! out as whole frames written by `txn::responses` for the request's version. Producer ids come
//! from the host's callable, called once per id a request needs.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use super::errors::{to_pyerr, IntoPyResult};
use crate::assignors::fxhash::FxMap;
use crate::coordinator::effect::Effect as E;
use crate::errors::{Error, ErrorCode};
use crate::txn::{requests, responses, Config, Coordinator, Effect, TxnState, TXN_API_KEYS};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCoordinator>()?;
    m.add_class::<PyRespond>()?;
    m.add_class::<PyAppend>()?;
    m.add_class::<PyWriteMarkers>()?;
    m.add("CONFIG_KEYS", Config::KEYS.to_vec())?;
    m.add("TXN_API_KEYS", TXN_API_KEYS.to_vec())?;
    Ok(())
}

/// Respond is an effect: write `frame` (a whole response frame) to the connection of the request
/// the host handed in with `token`.
#[pyclass(frozen, name = "Respond", module = "kgroup.txn")]
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
/// `__transaction_state`, then report the outcome with `Coordinator.appended(now_ms, token,
/// error_code)`.
#[pyclass(frozen, name = "Append", module = "kgroup.txn")]
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

/// WriteMarkers is an effect: write a COMMIT (`commit`) or ABORT marker of `producer_id` at
/// `producer_epoch`, with `coordinator_epoch`, to every (topic, partition) of `partitions`, then
/// report with `Coordinator.markers_written(now_ms, transactional_id, producer_id,
/// producer_epoch)`.
#[pyclass(frozen, name = "WriteMarkers", module = "kgroup.txn")]
pub struct PyWriteMarkers {
    #[pyo3(get)]
    transactional_id: String,
    #[pyo3(get)]
    producer_id: i64,
    #[pyo3(get)]
    producer_epoch: i16,
    #[pyo3(get)]
    commit: bool,
    #[pyo3(get)]
    coordinator_epoch: i32,
    #[pyo3(get)]
    partitions: Vec<(String, i32)>,
}

#[pymethods]
impl PyWriteMarkers {
    #[classattr]
    fn __match_args__() -> (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    ) {
        (
            "transactional_id",
            "producer_id",
            "producer_epoch",
            "commit",
            "coordinator_epoch",
            "partitions",
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "WriteMarkers(transactional_id={:?}, producer_id={}, producer_epoch={}, commit={}, \
             coordinator_epoch={}, partitions={:?})",
            self.transactional_id,
            self.producer_id,
            self.producer_epoch,
            if self.commit { "True" } else { "False" },
            self.coordinator_epoch,
            self.partitions
        )
    }
}

/// Waiting is a request whose response is still to come.
struct Waiting {
    token: Py<PyAny>,
    version: i16,
    correlation_id: i32,
}

/// Coordinator is the transaction coordinator of a broker; see `kgroup.txn.Coordinator`.
#[pyclass(name = "Coordinator", module = "kgroup.txn")]
pub struct PyCoordinator {
    inner: Coordinator,
    waiting: FxMap<u64, Waiting>,
    next: u64,
    effects: Vec<Effect>,
    out: Vec<u8>,
}

fn config_from(config: Option<&Bound<'_, PyAny>>) -> PyResult<Config> {
    let mut c = Config::default();
    let Some(config) = config else {
        return Ok(c);
    };
    let py = config.py();
    for item in config.call_method0("items")?.try_iter()? {
        let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let key: String = k
            .extract()
            .map_err(|_| to_pyerr(py, Error::InvalidType(format!("config key {k}: not a str"))))?;
        let value: i64 = if let Ok(s) = v.cast::<PyString>() {
            s.to_str()?.trim().parse().map_err(|_| {
                to_pyerr(
                    py,
                    Error::InvalidType(format!("{key}: {s} is not an integer")),
                )
            })?
        } else {
            v.extract().map_err(|_| {
                to_pyerr(
                    py,
                    Error::InvalidType(format!("{key}: {v} is not an integer")),
                )
            })?
        };
        c.set(&key, value).py_err(py)?;
    }
    Ok(c)
}

/// error_of is the Kafka error a producer-id supplier's exception stands for: its `code` when it
/// has one (a `kgroup.errors` Kafka error), else UNKNOWN_SERVER_ERROR, the exception then
/// reported as unraisable (`sys.unraisablehook`).
fn error_of(py: Python<'_>, err: PyErr, supplier: &Bound<'_, PyAny>) -> ErrorCode {
    if let Ok(code) = err
        .value(py)
        .getattr("code")
        .and_then(|c| c.extract::<i16>())
    {
        return ErrorCode::for_code(code);
    }
    err.write_unraisable(py, Some(supplier));
    ErrorCode::UnknownServerError
}

impl PyCoordinator {
    fn effects<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for e in self.effects.drain(..) {
            match e {
                E::Respond { token, response } => {
                    let Some(w) = self.waiting.remove(&token) else {
                        continue;
                    };
                    self.out.clear();
                    responses::write_frame(&response, w.version, w.correlation_id, &mut self.out)
                        .py_err(py)?;
                    list.append(Bound::new(
                        py,
                        PyRespond {
                            token: w.token,
                            frame: PyBytes::new(py, &self.out).unbind(),
                        },
                    )?)?;
                }
                E::Append {
                    token,
                    partition,
                    records,
                } => list.append(Bound::new(
                    py,
                    PyAppend {
                        token,
                        partition,
                        records: PyBytes::new(py, &records).unbind(),
                    },
                )?)?,
                E::Other(m) => list.append(Bound::new(
                    py,
                    PyWriteMarkers {
                        transactional_id: m.transactional_id,
                        producer_id: m.producer_id,
                        producer_epoch: m.producer_epoch,
                        commit: m.commit,
                        coordinator_epoch: m.coordinator_epoch,
                        partitions: m.partitions,
                    },
                )?)?,
            }
        }
        Ok(list)
    }
}

#[pymethods]
impl PyCoordinator {
    #[new]
    #[pyo3(signature = (config=None))]
    fn new(config: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        Ok(PyCoordinator {
            inner: Coordinator::new(config_from(config)?),
            waiting: FxMap::default(),
            next: 1,
            effects: Vec::new(),
            out: Vec::new(),
        })
    }

    /// handle_frame(now_ms, token, frame, next_producer_id=None) -> list[Effect]
    ///
    /// next_producer_id: a callable returning a fresh producer id, called once per id the
    /// request needs; None answers such a request UNKNOWN_SERVER_ERROR.
    #[pyo3(signature = (now_ms, token, frame, next_producer_id=None))]
    fn handle_frame<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        token: Py<PyAny>,
        frame: &[u8],
        next_producer_id: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let (header, input) = requests::decode(frame).py_err(py)?;
        let internal = self.next;
        self.next += 1;
        self.waiting.insert(
            internal,
            Waiting {
                token,
                version: header.version,
                correlation_id: header.correlation_id,
            },
        );
        let mut supply = || -> Result<i64, ErrorCode> {
            let Some(f) = &next_producer_id else {
                return Err(ErrorCode::UnknownServerError);
            };
            match f.call0().and_then(|v| v.extract::<i64>()) {
                Ok(id) => Ok(id),
                Err(e) => Err(error_of(py, e, f)),
            }
        };
        self.inner
            .handle_into(now_ms, internal, &input, &mut supply, &mut self.effects);
        self.effects(py)
    }

    /// appended(now_ms, token, error_code=0) -> list[Effect]
    #[pyo3(signature = (now_ms, token, error_code=0))]
    fn appended<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        token: u64,
        error_code: i16,
    ) -> PyResult<Bound<'py, PyList>> {
        self.inner
            .appended_into(
                now_ms,
                token,
                ErrorCode::for_code(error_code),
                &mut self.effects,
            )
            .py_err(py)?;
        self.effects(py)
    }

    /// markers_written(now_ms, transactional_id, producer_id, producer_epoch) -> list[Effect]
    fn markers_written<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: i64,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
    ) -> PyResult<Bound<'py, PyList>> {
        self.inner.markers_written_into(
            now_ms,
            transactional_id,
            producer_id,
            producer_epoch,
            &mut self.effects,
        );
        self.effects(py)
    }

    /// tick(now_ms) -> list[Effect]
    fn tick<'py>(&mut self, py: Python<'py>, now_ms: i64) -> PyResult<Bound<'py, PyList>> {
        self.inner.tick_into(now_ms, &mut self.effects);
        self.effects(py)
    }

    /// The time (ms) the next timer is due at, or None.
    #[getter]
    fn next_deadline(&mut self) -> Option<i64> {
        self.inner.next_deadline()
    }

    /// load(partition, batches, last=True, coordinator_epoch=0) -> dict[str, int]
    #[pyo3(signature = (partition, batches, last=true, coordinator_epoch=0))]
    fn load<'py>(
        &mut self,
        py: Python<'py>,
        partition: i32,
        batches: &[u8],
        last: bool,
        coordinator_epoch: i32,
    ) -> PyResult<Bound<'py, PyDict>> {
        let inner = &mut self.inner;
        let stats = py
            .detach(|| inner.load(partition, batches, last, coordinator_epoch))
            .py_err(py)?;
        let d = PyDict::new(py);
        d.set_item("batches", stats.batches)?;
        d.set_item("records", stats.records)?;
        d.set_item("unknown", stats.unknown)?;
        d.set_item("transactions", stats.transactions)?;
        Ok(d)
    }

    /// unload(now_ms, partition) -> list[Effect]
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
        self.inner.set_topics(
            topics
                .as_ref()
                .map(|t| t.iter().map(|(k, v)| (k.as_str(), *v))),
        );
    }

    /// verify(transactional_id, producer_id, producer_epoch, topic, partition) -> int
    fn verify(
        &self,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        topic: &str,
        partition: i32,
    ) -> i16 {
        self.inner
            .verify(
                transactional_id,
                producer_id,
                producer_epoch,
                topic,
                partition,
            )
            .code()
    }

    /// partition_for(transactional_id) -> int
    fn partition_for(&self, transactional_id: &str) -> i32 {
        self.inner.partition_for(transactional_id)
    }

    /// transaction_state(transactional_id) -> str | None
    fn transaction_state(&self, transactional_id: &str) -> Option<&'static str> {
        self.inner
            .transaction(transactional_id)
            .map(|m| m.state.name())
    }

    /// transactions() -> list[dict[str, Any]]
    ///
    /// Every transactional id the coordinator holds but Dead ones (as DescribeTransactions
    /// answers for them), by id: `transactional_id`, `producer_id`, `producer_epoch`, `state`
    /// (Kafka's names), `pending_state` (the state a change not yet durable leads to, or
    /// None), `timeout_ms`, `partitions` ([(topic, partition)], sorted), `start_time_ms` (-1
    /// without a partition), `update_time_ms`.
    fn transactions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for m in self.inner.transactions() {
            if m.state == TxnState::Dead || m.pending == Some(TxnState::Dead) {
                continue;
            }
            let d = PyDict::new(py);
            d.set_item("transactional_id", &m.transactional_id)?;
            d.set_item("producer_id", m.producer_id)?;
            d.set_item("producer_epoch", m.producer_epoch)?;
            d.set_item("state", m.state.name())?;
            d.set_item("pending_state", m.pending.map(TxnState::name))?;
            d.set_item("timeout_ms", m.timeout_ms)?;
            let parts: Vec<(&str, i32)> =
                m.partitions.iter().map(|(t, p)| (t.as_str(), *p)).collect();
            d.set_item("partitions", parts)?;
            d.set_item("start_time_ms", m.start_timestamp)?;
            d.set_item("update_time_ms", m.update_timestamp)?;
            out.append(d)?;
        }
        Ok(out)
    }

    #[getter]
    fn transaction_count(&self) -> usize {
        self.inner.transaction_count()
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
