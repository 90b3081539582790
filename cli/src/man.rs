//! Man pages generated from the clap definitions: one for `resetctl` and
//! one for each visible subcommand (`resetctl-seed.1`, `resetctl-snapshots-list.1`…).
//! `make man` writes them into `man/`; a test fails when the committed copies
//! are stale.

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
    let page_cmd = cmd.clone().name(name.to_owned());
    let mut bytes = Vec::new();
    clap_mangen::Man::new(page_cmd)
        .render(&mut bytes)
        .expect("rendering into memory");
    pages.push((format!("{name}.1"), bytes));
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        render(sub, &format!("{name}-{}", sub.get_name()), pages);
    }
}
