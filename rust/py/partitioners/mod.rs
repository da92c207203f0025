//! Bindings for the partitioners (`kgroup.partitioners` wraps these): the null-key
//! partitioners' classes here, key hashing and batch partitioning in `keys.rs`.

use std::collections::HashMap;

use pyo3::prelude::*;

pub(crate) mod arrow;
pub(crate) mod keys;

use self::keys::key_bytes;
use super::errors::IntoPyResult;
use crate::partitioners::hash::KeyHash;
use crate::partitioners::{
    BuiltInPartitioner, BuiltInPartitionerConfig, RoundRobinPartitioner, StickyPartitionCache,
    TopicInfo,
};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    keys::register(m)?;
    m.add_class::<PyRoundRobinPartitioner>()?;
    m.add_class::<PyStickyPartitionCache>()?;
    m.add_class::<PyBuiltInPartitioner>()?;
    Ok(())
}

fn topic(py: Python<'_>, num_partitions: i64, available: Option<Vec<i32>>) -> PyResult<TopicInfo> {
    TopicInfo::new(num_partitions, available).py_err(py)
}

/// keyed_or is a producer's choice for one record: murmur2's partition for a key (every Java
/// era hashes keys alike), else what `null_key` picks for the topic.
fn keyed_or(
    py: Python<'_>,
    topic_name: &str,
    num_partitions: i64,
    key: Option<&Bound<'_, PyAny>>,
    available: Option<Vec<i32>>,
    null_key: impl FnOnce(&str, &TopicInfo) -> i32,
) -> PyResult<i32> {
    let info = topic(py, num_partitions, available)?;
    match key.map(key_bytes).transpose()?.flatten() {
        Some(b) => Ok(KeyHash::Murmur2.partition(&b, info.num_partitions as u32)),
        None => Ok(null_key(topic_name, &info)),
    }
}

#[pyclass(name = "RoundRobinPartitioner", module = "kgroup.partitioners")]
pub struct PyRoundRobinPartitioner {
    inner: RoundRobinPartitioner,
}

#[pymethods]
impl PyRoundRobinPartitioner {
    #[new]
    #[pyo3(signature = (*, seed=None, start=None))]
    fn new(seed: Option<u64>, start: Option<i32>) -> Self {
        PyRoundRobinPartitioner {
            inner: RoundRobinPartitioner::new(seed, start),
        }
    }

    #[pyo3(signature = (topic, num_partitions, key=None, available=None))]
    fn partition(
        &mut self,
        py: Python<'_>,
        topic: &str,
        num_partitions: i64,
        key: Option<&Bound<'_, PyAny>>,
        available: Option<Vec<i32>>,
    ) -> PyResult<i32> {
        keyed_or(py, topic, num_partitions, key, available, |t, info| {
            self.inner.partition(t, info)
        })
    }
}

#[pyclass(name = "StickyPartitionCache", module = "kgroup.partitioners")]
pub struct PyStickyPartitionCache {
    inner: StickyPartitionCache,
}

#[pymethods]
impl PyStickyPartitionCache {
    #[new]
    #[pyo3(signature = (*, seed=None))]
    fn new(seed: Option<u64>) -> Self {
        PyStickyPartitionCache {
            inner: StickyPartitionCache::new(seed),
        }
    }

    #[pyo3(signature = (topic, num_partitions, key=None, available=None))]
    fn partition(
        &mut self,
        py: Python<'_>,
        topic: &str,
        num_partitions: i64,
        key: Option<&Bound<'_, PyAny>>,
        available: Option<Vec<i32>>,
    ) -> PyResult<i32> {
        keyed_or(py, topic, num_partitions, key, available, |t, info| {
            self.inner.partition(t, info)
        })
    }

    #[pyo3(signature = (topic, prev_partition, num_partitions, available=None))]
    fn next_partition(
        &mut self,
        py: Python<'_>,
        topic: &str,
        prev_partition: i32,
        num_partitions: i64,
        available: Option<Vec<i32>>,
    ) -> PyResult<i32> {
        let info = self::topic(py, num_partitions, available)?;
        Ok(self.inner.next_partition(topic, &info, prev_partition))
    }
}

#[pyclass(name = "BuiltInPartitioner", module = "kgroup.partitioners")]
pub struct PyBuiltInPartitioner {
    inner: BuiltInPartitioner,
}

#[pymethods]
impl PyBuiltInPartitioner {
    #[new]
    #[pyo3(signature = (num_partitions, *, batch_size=16384, adaptive_partitioning=true,
                        availability_timeout_ms=0, ignore_keys=false, available=None, seed=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        num_partitions: i64,
        batch_size: i32,
        adaptive_partitioning: bool,
        availability_timeout_ms: i64,
        ignore_keys: bool,
        available: Option<Vec<i32>>,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let cfg = BuiltInPartitionerConfig {
            batch_size,
            adaptive_partitioning,
            availability_timeout_ms,
            ignore_keys,
        };
        let info = topic(py, num_partitions, available)?;
        Ok(PyBuiltInPartitioner {
            inner: BuiltInPartitioner::new(info, cfg, seed).py_err(py)?,
        })
    }

    #[pyo3(signature = (key=None))]
    fn partition(&mut self, key: Option<&Bound<'_, PyAny>>) -> PyResult<i32> {
        let bytes = match key {
            Some(k) => key_bytes(k)?,
            None => None,
        };
        Ok(self.inner.partition(bytes.as_deref()))
    }

    fn peek_partition(&mut self) -> i32 {
        self.inner.peek_partition()
    }

    #[pyo3(signature = (appended_bytes, enable_switch=true))]
    fn update_partition_info(&mut self, appended_bytes: i64, enable_switch: bool) -> bool {
        self.inner
            .update_partition_info(appended_bytes, enable_switch)
    }

    #[pyo3(signature = (queue_sizes, leaders=None, node_unready_ms=None))]
    fn update_load_stats(
        &mut self,
        py: Python<'_>,
        queue_sizes: Vec<Option<i32>>,
        leaders: Option<Vec<Option<i32>>>,
        node_unready_ms: Option<HashMap<i32, i64>>,
    ) -> PyResult<()> {
        self.inner
            .update_load_stats(
                &queue_sizes,
                leaders.as_deref(),
                &node_unready_ms.unwrap_or_default(),
            )
            .py_err(py)
    }

    #[pyo3(signature = (num_partitions, available=None))]
    fn update_metadata(
        &mut self,
        py: Python<'_>,
        num_partitions: i64,
        available: Option<Vec<i32>>,
    ) -> PyResult<()> {
        self.inner
            .set_topic_info(topic(py, num_partitions, available)?);
        Ok(())
    }

    #[getter]
    fn load_weights(&self) -> Option<Vec<(i32, i32)>> {
        self.inner.load_weights()
    }

    #[getter]
    fn produced_bytes(&self) -> i64 {
        self.inner.produced_bytes()
    }

    #[getter]
    fn num_partitions(&self) -> i32 {
        self.inner.topic_info().num_partitions
    }

    #[getter]
    fn batch_size(&self) -> i32 {
        self.inner.config().batch_size
    }

    fn __repr__(&self) -> String {
        let c = self.inner.config();
        format!(
            "BuiltInPartitioner(num_partitions={}, batch_size={}, adaptive_partitioning={}, availability_timeout_ms={}, ignore_keys={})",
            self.inner.topic_info().num_partitions,
            c.batch_size,
            if c.adaptive_partitioning { "True" } else { "False" },
            c.availability_timeout_ms,
            if c.ignore_keys { "True" } else { "False" }
        )
    }
}
