//! Small dense math shared by the simulator: spatial (6D) algebra, rotations, soft norms,
//! block-diagonal Cholesky.
//!
//! Frame notation follows Drake's monogram convention: `X_AB` is the pose of frame B
//! measured and expressed in frame A, `R_AB` its rotation, `p_AB` the position of B's origin
//! in A. Spatial vectors are stacked (angular; linear), as in Featherstone's RBDA.

pub(crate) mod block;
pub mod rotation;
pub mod soft;
pub mod spatial;

pub use rotation::{integrate_quaternion, rotation_from_quaternion};
pub use soft::{soft_norm, SoftNorm};
pub use spatial::{rotate, rotate_back, skew, Pose, SpatialInertia};
