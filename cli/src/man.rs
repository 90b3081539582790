//! Man pages generated from the clap definitions: one for `resetctl` and
//! one for each visible subcommand (`resetctl-seed.1`, `resetctl-snapshots-list.1`…).
//! `make man` writes them into `man/`; a test fails when the committed copies
//! are stale. Each option names its environment variable; the examples
//! (the EXTRA section) are set without filling, so `man` never breaks a
//! command, a unit line or a crontab line in two. The page's version is
//! the package version alone (the commit of `--version` would make every
//! commit a man page change).

/// Every man page as (file name, roff bytes).
pub fn render_man_pages() -> Vec<(String, Vec<u8>)> {
    let mut pages = Vec::new();
    let mut root = crate::help::documented();
    root.build();
    render(&root, "resetctl", &mut pages);
    pages
}

fn render(cmd: &clap::Command, name: &str, pages: &mut Vec<(String, Vec<u8>)>) {
    let mut page_cmd = cmd.clone().name(name.to_owned()).long_version(None::<&str>);
    // `resetctl help` has no page of its own: the pages list only those that exist.
    if page_cmd.find_subcommand("help").is_some() {
        page_cmd = page_cmd.mut_subcommand("help", |help| help.hide(true));
    }
    let mut bytes = Vec::new();
    clap_mangen::Man::new(page_cmd)
        .render(&mut bytes)
        .expect("rendering into memory");
    let page = synopsis_with_values(bytes, cmd);
    pages.push((format!("{name}.1"), examples_unfilled(page)));
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        render(sub, &format!("{name}-{}", sub.get_name()), pages);
    }
}

/// The SYNOPSIS line with each option's value placeholder after it
/// (`[--listen ADDR]`, not `[--listen]`), as the OPTIONS section shows them.
fn synopsis_with_values(page: Vec<u8>, cmd: &clap::Command) -> Vec<u8> {
    let page = String::from_utf8(page).expect("clap_mangen writes UTF-8");
    let Some(start) = page
        .find(".SH SYNOPSIS\n")
        .map(|i| i + ".SH SYNOPSIS\n".len())
    else {
        return page.into_bytes();
    };
    let end = page[start..].find('\n').map_or(page.len(), |i| start + i);
    let mut line = page[start..end].to_owned();
    for arg in cmd.get_arguments() {
        let (Some(long), Some(values)) = (arg.get_long(), arg.get_value_names()) else {
            continue;
        };
        if !arg.get_action().takes_values() {
            continue;
        }
        let placeholder = values
            .iter()
            .map(|v| format!("\\fI{}\\fR", roff_escape(v)))
            .collect::<Vec<_>>()
            .join(" ");
        let option = format!("\\fB\\-\\-{}\\fR", roff_escape(long));
        line = line.replace(&format!("{option}]"), &format!("{option} {placeholder}]"));
    }
    format!("{}{line}{}", &page[..start], &page[end..]).into_bytes()
}

/// `text` as roff writes it in a line of text (hyphens escaped).
fn roff_escape(text: &str) -> String {
    text.replace('-', "\\-")
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
