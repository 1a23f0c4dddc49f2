//! Reference license server (issue 5 fills this crate).
