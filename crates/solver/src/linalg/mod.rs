//! Linear algebra of the implicit step: the 3×3 block sparse matrix, deterministic reductions and the
//! modified preconditioned conjugate gradient (Baraff & Witkin §5.3 with Boxerman's corrections).

pub mod amg;
pub mod block_sparse;
pub mod choice;
pub mod deflation;
pub mod dissection;
pub mod ic_shift;
pub mod incomplete_cholesky;
pub mod mpcg;
pub mod reduce;
pub mod solve_times;

pub use amg::Amg;
pub use block_sparse::{BlockMatrix, BlockPattern};
pub use incomplete_cholesky::IncompleteCholesky;
pub use mpcg::{CgResult, CgSettings, Filter, Mpcg, Preconditioner, Problem};
pub use solve_times::SolveTimes;
