//! Strategy SDK (issue 3 fills this crate).
