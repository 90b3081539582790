//! The public query surface, free of HTTP: strict parameter parsing,
//! filters and the total ordering of the spec, and the precomputed view a
//! server answers from in O(pageSize).

mod args;
mod order;
mod params;
pub(crate) mod view;

pub use crate::model::{compare_ids, concerns_plan, visible_in};
pub use args::{latest_query_from_args, list_query_from_args, ArgumentError};
pub use order::order_for;
pub use params::{
    parse_atom_query, parse_ics_query, parse_latest_query, parse_list_query, parse_stream_query,
    AtomQuery, IcsQuery, KindFilter, LatestQuery, ListQuery, PlanId, QueryError, StreamQuery,
    DEFAULT_PAGE_SIZE, MAX_ALARM_MINUTES, MAX_PAGE_SIZE,
};
pub use view::{
    entity_tag, entity_tag_of, Body, Fragment, PageWindow, PublishedView, Validators, Variant,
};
