//! Nothing here: the tests are the point (see README.md).
