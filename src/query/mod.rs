//! The public query surface, free of HTTP: strict parameter parsing,
//! filters and the total ordering of the spec, and the precomputed view a
//! server answers from in O(pageSize).

mod args;
mod order;
mod params;
mod view;

pub use args::{latest_query_from_args, list_query_from_args};
pub use order::{compare_ids, order_for, visible_in};
pub use params::{
    parse_latest_query, parse_list_query, KindFilter, LatestQuery, ListQuery, QueryError,
};
pub use view::{PageWindow, PublishedView};
