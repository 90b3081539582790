//! Man pages generated from the clap definitions: one for `resetctl` and
//! one for each visible subcommand (`resetctl-seed.1`, `resetctl-snapshots-list.1`…).
//! `make man` writes them into `man/`; a test fails when the committed copies
//! are stale. Each option names its environment variable; the examples
//! (the EXTRA section) are set without filling, so `man` never breaks a
//! command, a unit line or a crontab line in two. The page's version is
//! the package version alone (the commit of `--version` would make every
//! commit a man page change).

use clap::CommandFactory;

use crate::args::Cli;

/// Every man page as (file name, roff bytes).
pub fn render_man_pages() -> Vec<(String, Vec<u8>)> {
    let mut pages = Vec::new();
    let mut root = Cli::command();
    root.build();
    render(&root, "resetctl", &mut pages);
    pages
}

fn render(cmd: &clap::Command, name: &str, pages: &mut Vec<(String, Vec<u8>)>) {
    let page_cmd = cmd.clone().name(name.to_owned()).long_version(None::<&str>);
    let mut bytes = Vec::new();
    clap_mangen::Man::new(page_cmd)
        .render(&mut bytes)
        .expect("rendering into memory");
    pages.push((format!("{name}.1"), examples_unfilled(bytes)));
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        render(sub, &format!("{name}-{}", sub.get_name()), pages);
    }
}

/// The EXTRA section (the examples) between `.nf` and `.fi`: no filling,
/// so no line of an example is joined with the next or broken in two.
fn examples_unfilled(page: Vec<u8>) -> Vec<u8> {
    let page = String::from_utf8(page).expect("clap_mangen writes UTF-8");
    let Some(start) = page.find(".SH EXTRA\n") else {
        return page.into_bytes();
    };
    let body = start + ".SH EXTRA\n".len();
    let end = page[body..]
        .find("\n.SH ")
        .map_or(page.len(), |i| body + i + 1);
    let mut out = String::with_capacity(page.len() + 8);
    out.push_str(&page[..body]);
    out.push_str(".nf\n");
    out.push_str(page[body..end].trim_end_matches('\n'));
    out.push_str("\n.fi\n");
    out.push_str(&page[end..]);
    out.into_bytes()
}
