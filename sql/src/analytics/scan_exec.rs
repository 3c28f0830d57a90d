//! [`StorageScanExec`]: the physical plan node of a table scan. It runs the scan's partitions
//! through DataFusion's `StreamingTableExec` and adds an estimated row count, so the physical
//! optimizer builds hash tables on the smaller side of a join (`JoinSelection` swaps join
//! inputs by statistics and keeps the SQL order when there are none).
//!
//! Invariants: the estimate is reported as `Inexact` and only steers plan choices; execution,
//! partitioning and output are exactly the inner node's.

use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Statistics, internal_err};
use datafusion::error::Result as DfResult;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::statistics::StatisticsArgs;
use datafusion::physical_plan::streaming::StreamingTableExec;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use std::fmt;
use std::sync::Arc;

/// A table scan with an estimated row count per partition.
#[derive(Debug)]
pub struct StorageScanExec {
    inner: Arc<StreamingTableExec>,
    /// Estimated rows per partition (`None` = unknown), one entry per partition.
    rows: Vec<Option<usize>>,
    /// True if the partitions serve batches from the column cache (shown by EXPLAIN).
    from_cache: bool,
}

impl StorageScanExec {
    /// Wraps `inner`; `rows` holds one estimate per partition of `inner`.
    #[must_use]
    pub fn new(inner: StreamingTableExec, rows: Vec<Option<usize>>) -> Self {
        Self {
            inner: Arc::new(inner),
            rows,
            from_cache: false,
        }
    }

    /// Like [`Self::new`], for partitions served from the column cache (exact row counts).
    #[must_use]
    pub fn cached(inner: StreamingTableExec, rows: Vec<Option<usize>>) -> Self {
        Self {
            from_cache: true,
            ..Self::new(inner, rows)
        }
    }

    /// The estimated rows of one partition, or of all of them.
    fn estimate(&self, partition: Option<usize>) -> Option<usize> {
        match partition {
            Some(p) => self.rows.get(p).copied().flatten(),
            None => self.rows.iter().copied().sum(),
        }
    }
}

impl DisplayAs for StorageScanExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "StorageScanExec: ")?;
        if self.from_cache {
            write!(f, "column cache, ")?;
        }
        match self.estimate(None) {
            Some(rows) => write!(f, "estimated_rows={rows}, ")?,
            None => write!(f, "estimated_rows=unknown, ")?,
        }
        self.inner.fmt_as(t, f)
    }
}

impl ExecutionPlan for StorageScanExec {
    fn name(&self) -> &str {
        "StorageScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            internal_err!("StorageScanExec has no children to replace")
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        self.inner.execute(partition, context)
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> DfResult<Arc<Statistics>> {
        let mut stats = Statistics::new_unknown(&self.schema());
        if let Some(rows) = self.estimate(args.partition()) {
            stats.num_rows = Precision::Inexact(rows);
        }
        Ok(Arc::new(stats))
    }
}
