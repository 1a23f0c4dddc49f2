//! Exchange simulator (issue 4 fills this crate).
