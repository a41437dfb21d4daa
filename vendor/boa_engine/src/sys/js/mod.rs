pub(crate) use getrandom as _;
pub(crate) use web_time as time;
