"""Command line: options -> config -> run -> report."""

from __future__ import annotations

import difflib
import importlib
import sys
from pathlib import Path

import click

from nanlint.lint import cache as cache_mod
from nanlint import __version__, report
from nanlint.lint import catalogue, discovery, runner
from nanlint.lint import project as project_mod
from nanlint.lint.config import ConfigError
from nanlint.rules.base import all_rules, find
from nanlint.lint import baseline, noqa
from nanlint.lint import notebook
from nanlint.source.lines import split_lines

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT), as a shell reports a process ended by it


def _component(name: str):
    """An optional part loaded when its subcommand runs, the way click loads subcommands
    lazily: the fixture harness (frameworks) and the language server (pygls, an optional
    dependency) are above the CLI in no layer and never load with a lint."""
    return importlib.import_module(name)


def fail(message: str) -> None:
    click.echo(f"nanlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


class DefaultGroup(click.Group):
    """``nanlint [OPTIONS] PATH...`` runs ``check``; ``nanlint rule ...`` the subcommand.

    ``nanlint --help`` shows the check options (they are the ones people use), and a
    usage error is one line, ``nanlint: error: ...``, exit code 2."""

    def parse_args(self, ctx, args):
        if not args or args[0] not in self.commands:
            if not (args and args[0] in ("--help", "-h", "--version")):
                args = ["check", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx, formatter):
        formatter.write_usage(ctx.command_path, "[OPTIONS] [PATH]...", prefix="Usage: ")
        formatter.write_usage(ctx.command_path, "COMMAND [ARGS]...", prefix="       ")

    def format_options(self, ctx, formatter):
        check_cmd = self.commands["check"]
        own_help = check_cmd.get_help_option(ctx)
        records = [r for p in check_cmd.get_params(ctx) if isinstance(p, click.Option) and p is not own_help
                   and (r := p.get_help_record(ctx)) is not None]
        records += [r for p in self.get_params(ctx) if (r := p.get_help_record(ctx)) is not None]
        with formatter.section("Options (of the default command, check)"):
            formatter.write_dl(records)
        self.format_commands(ctx, formatter)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            message = " ".join(exc.format_message().split())
            command = exc.ctx.command_path if exc.ctx is not None else "nanlint"
            if exc.ctx is not None and exc.ctx.command.name == "check":  # implied: `nanlint --help` shows it
                command = command.rsplit(" ", 1)[0]
            click.echo(f"nanlint: error: {message} (see `{command} --help`)", err=True)
            sys.exit(EXIT_ERROR)
        except click.ClickException as exc:
            click.echo(f"nanlint: error: {' '.join(exc.format_message().split())}", err=True)
            sys.exit(EXIT_ERROR)
        except click.Abort:
            click.echo("nanlint: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="nanlint")
def main() -> None:
    """Find and fix NaN/Inf hazards in ML training code (TensorFlow, PyTorch, JAX, Keras).

    Run `nanlint [OPTIONS] [PATH]...` to lint (the `check` command is implied),
    `nanlint --fix src/` to fix, `nanlint rule NAN101` to read a rule's page,
    `nanlint server` for editors (Language Server Protocol).

    What is reported by default: findings on strong evidence (the code shows the hazard can
    happen here). `--may` also reports those on weak evidence; a few rules are opt-in and run
    only when selected (`nanlint rule --all` lists them; `--select ALL` runs every rule)."""


# The options of ``check``, the implied command (``nanlint --help`` lists them too:
# DefaultGroup.format_options).
CHECK_OPTIONS = [
    click.argument("paths", nargs=-1, type=click.Path(path_type=Path)),
    click.option("--fix", is_flag=True, help="Apply safe fixes."),
    click.option("--unsafe-fixes", "unsafe_fixes", is_flag=True, default=None,
                 help="Also apply (and show as fixable) unsafe fixes."),
    click.option("--no-unsafe-fixes", "unsafe_fixes", flag_value=False, help="Do not apply unsafe fixes."),
    click.option("--may", "may", is_flag=True, default=None,
                 help="Also report findings on weak evidence (the may tier): a hazard that happens only "
                      "if something the code does not show holds; enables NAN109 and NAN110."),
    click.option("--no-may", "may", flag_value=False, help="Report only findings on strong evidence."),
    click.option("--diff", is_flag=True, help="Show the fixes as a diff; write nothing."),
    click.option("--select", "select", default=None,
                 help="Comma-separated rules to enable (codes, prefixes, names, ALL); without it, the "
                      "default rules (`nanlint rule --all` marks the opt-in ones)."),
    click.option("--extend-select", default=None, help="Rules to enable on top of the selection."),
    click.option("--ignore", default=None, help="Rules to disable."),
    click.option("--exclude", default=None, help="Comma-separated patterns to exclude (replaces the defaults)."),
    click.option("--extend-exclude", default=None, help="Patterns to exclude on top of the defaults."),
    click.option("--force-exclude/--no-force-exclude", "force_exclude", default=None,
                 help="Apply the excludes to files named on the command line too (pre-commit names every "
                      "staged file)."),
    click.option("--stdin-filename", type=click.Path(path_type=Path), default=None,
                 help="Read the source from standard input (also `-` as the path) and lint it as this file: "
                      "its configuration, per-file-ignores and, with --force-exclude, excludes; "
                      "--fix writes the fixed source to standard output."),
    click.option("--format", "fmt", type=click.Choice(report.formats()), default="text", show_default=True,
                 help="Output format."),
    click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain."),
    click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when any fix was applied."),
    click.option("--config", "config_file", type=click.Path(path_type=Path), default=None,
                 help="A pyproject.toml or nanlint.toml to use instead of discovery."),
    click.option("--isolated", is_flag=True, help="Ignore all configuration files."),
    click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary."),
    click.option("-v", "--verbose", is_flag=True,
                 help="Also say, on standard error, what was not linted: each notebook cell left out "
                      "(a %%bash or unknown cell magic) and why."),
    click.option("--output-file", "-o", type=click.Path(path_type=Path), default=None,
                 help="Write the report to this file instead of standard output."),
    click.option("--statistics", is_flag=True,
                 help="Count findings per rule (and whether fixable) instead of listing them."),
    click.option("--show-fixes", is_flag=True, help="With --fix: list what it changed, per file and rule."),
    click.option("--baseline", "baseline_file", type=click.Path(path_type=Path), default=None,
                 help="Report only findings not recorded in this baseline file."),
    click.option("--write-baseline", type=click.Path(path_type=Path), default=None,
                 help="Record the current findings in this baseline file and exit 0."),
    click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` on the line of every finding."),
    click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, show_default=True,
                 help="Worker processes (0: one per core; small runs stay in one process)."),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache."),
    click.option("--cache-dir", type=click.Path(path_type=Path), default=None,
                 help="Where to keep the result cache (default: .nanlint_cache in the project root)."),
    click.option("--no-prefilter", is_flag=True, hidden=True, help="Parse every file (for testing the prefilter)."),
]


def check_options(f):
    for decorator in reversed(CHECK_OPTIONS):
        f = decorator(f)
    return f


@main.command("check", short_help="Lint (and fix) files; the default command.")
@check_options
def check(paths, fix, unsafe_fixes, may, diff, select, extend_select, ignore, exclude, extend_exclude, force_exclude,
          stdin_filename, fmt, exit_zero, exit_non_zero_on_fix, config_file, isolated, quiet,
          verbose, output_file, statistics, show_fixes, baseline_file, write_baseline, add_noqa,
          jobs, no_cache, cache_dir, no_prefilter) -> None:
    """Lint PATHS (default: the current directory; `-`: standard input)."""
    paths = list(paths)
    stdin = any(str(p) == "-" for p in paths) or (stdin_filename is not None and not paths)
    if stdin and len(paths) > 1:
        fail("`-` (standard input) cannot be combined with other paths")
    if stdin_filename is not None and not stdin:
        fail("--stdin-filename names the source read from standard input: pass `-` as the path, or no path")
    if show_fixes and not fix:
        fail("--show-fixes lists what --fix changed: add --fix (or use --diff to see what it would change)")
    if stdin and (add_noqa or write_baseline is not None):
        fail("--add-noqa and --write-baseline act on files, not on standard input")
    named_files = bool(paths) and not stdin and not any(p.is_dir() for p in paths)
    if not stdin and not paths:
        paths = [Path(".")]
    options = project_mod.Options(
        select=_split(select) if select is not None else None, extend_select=_split(extend_select),
        ignore=_split(ignore), exclude=_split(exclude) if exclude is not None else None,
        extend_exclude=_split(extend_exclude), unsafe_fixes=unsafe_fixes, may=may, force_exclude=force_exclude,
        config_file=config_file, isolated=isolated,
        edits=bool(fix or diff) or report.shows_edits(fmt, statistics))
    try:
        project = project_mod.resolve([stdin_filename] if stdin and stdin_filename else [] if stdin else paths,
                                      options)
    except ConfigError as exc:
        fail(str(exc))
        return
    cfg, unsafe = project.cfg, project.unsafe

    if stdin:
        found = discovery.Discovered(files=[stdin_filename or Path("-")])
        stdin_data = click.get_binary_stream("stdin").read()
        if stdin_filename is not None and project.force_exclude and project.excluded(stdin_filename):
            if fix and not diff:  # an editor replaces the buffer with the output: give it back as it was
                click.get_binary_stream("stdout").write(stdin_data)
            sys.exit(EXIT_OK)
        name = found.files[0]
        results = [(runner.process_source(name, stdin_data, project.linter_for(name), fix=fix or diff,
                                          unsafe=unsafe, write=False), stdin_data)]
    else:
        found = discovery.discover(paths, project.excludes, cfg.root, project.force_exclude)
        if found.missing and (add_noqa or write_baseline is not None):
            fail(f"path does not exist: {', '.join(found.missing)}")
        cache = None if no_cache else cache_mod.Cache(cache_dir if cache_dir is not None
                                                      else cfg.root / cache_mod.DIRNAME)
        try:
            results = runner.run(found.files, project.linter_for, fix=fix or diff, unsafe=unsafe,
                                 write=fix and not diff, jobs=jobs, cache=cache, prefilter=not no_prefilter,
                                 cache_extra=cache_mod.project_stamp(cfg.root, cfg.path) if cache is not None else "")
        except runner.Interrupted as exc:
            _interrupted(exc.fixed, fix and not diff)
    errors = list(found.errors)
    if found.missing:  # the paths that exist are linted all the same; the exit code is 2
        errors.insert(0, f"path does not exist: {', '.join(found.missing)}")
    findings = []
    fixed = 0
    changed = 0
    hidden = 0
    opt_in: set[str] = set()
    fixes_by_file: dict[str, dict[str, int]] = {}
    for result, original in results:
        if result.error:
            errors.append(result.error)
        findings.extend(result.findings)
        hidden += result.hidden
        opt_in.update(result.opt_in)
        fixed += result.fixed
        if result.fixed and not diff:
            fixes_by_file[result.path] = dict(getattr(result, "fixed_codes", {}) or {"?": result.fixed})
        if diff and result.fixed_source is not None and original is not None:
            changed += 1
            click.echo(_unified_diff(result.path, original, result.fixed_source), nl=False)
        elif result.fixed_source is not None:
            changed += 1
    findings.sort(key=lambda f: f.sort_key())
    adopt = _adopt(findings, found.files, baseline_file, write_baseline, add_noqa, errors, diff)
    if adopt is not None:
        sys.exit(adopt)
    if baseline_file is not None:
        findings = _baseline_filter(findings, found.files, baseline_file, errors)

    for line in errors:
        click.echo(f"nanlint: error: {line}", err=True)
    if verbose:
        for result, original in results:
            if result.path.endswith(".ipynb") and original is not None:
                for line in notebook.skipped_cells(original):
                    click.echo(f"{result.path}: {line}", err=True)
    if not found.files and not errors:
        for path in found.force_excluded:  # a file named by pre-commit is excluded on purpose: silent
            if path.is_dir():
                click.echo(f'nanlint: warning: {path} is excluded by the pattern "{found.why[str(path)]}" '
                           f"(force-exclude); nothing under it was linted", err=True)
        if not found.force_excluded:
            excluded = "; ".join(f'{n} path{"s" if n != 1 else ""} excluded by "{pattern}"'
                                 for pattern, n in found.skipped.items())
            click.echo("nanlint: warning: no Python files found under the given paths"
                       + (f": {excluded}" if excluded else ""), err=True)

    # stdin with --fix: the fixed source is the output; the report goes to stderr
    to_stderr = stdin and fix and not diff
    if to_stderr:
        result, original = results[0]
        click.get_binary_stream("stdout").write(result.fixed_source if result.fixed_source is not None
                                                else original)
    if diff:
        if not quiet:
            click.echo(f"Would fix {fixed} finding{'s' if fixed != 1 else ''}.", err=True)
        code = EXIT_FINDINGS if changed else EXIT_OK
    else:
        stream = sys.stderr if to_stderr else sys.stdout
        run = report.Run(findings, fixed=fixed, unsafe_fixes=unsafe, fix_mode=fix, errors=errors,
                         files=len(found.files), show_fixes=show_fixes, fixes_by_file=fixes_by_file,
                         explicit_files=named_files, excluded=len(found.force_excluded), hidden=hidden,
                         opt_in=sorted(opt_in),
                         color=output_file is None and fmt in ("text", "full") and report.use_color(stream))
        if stdin:  # the report's source lines are those read, not the file on disk
            source = results[0][0].fixed_source if to_stderr and results[0][0].fixed_source else stdin_data
            run.set_source(str(found.files[0]), source)
        out = report.render_statistics(fmt, run) if statistics else report.render(fmt, run)
        if quiet and fmt in ("text", "full") and not statistics:  # the findings without the summary
            out = "".join(line + "\n" for line in out.splitlines()[:-len(report.text.summary(run).splitlines())])
        if output_file is not None:
            try:
                output_file.write_text(out, encoding="utf-8")
            except OSError as exc:
                fail(f"cannot write {output_file}: {exc.strerror or exc}")
        else:
            click.echo(out, nl=False, color=run.color, err=to_stderr)
        code = EXIT_FINDINGS if findings else EXIT_OK
        if exit_non_zero_on_fix and fixed:
            code = EXIT_FINDINGS
        if exit_zero:
            code = EXIT_OK
    if errors:
        code = EXIT_ERROR
    sys.exit(code)


def _interrupted(fixed: list[str], writing: bool) -> None:
    """Ctrl-C during the run: say which files were fixed before it (no other was written)."""
    if writing:
        n = len(fixed)
        if fixed:
            click.echo(f"nanlint: interrupted; {n} file{'s' if n != 1 else ''} fixed before the interrupt "
                       f"(no other file was changed):", err=True)
            for path in fixed:
                click.echo(f"  {path}", err=True)
        else:
            click.echo("nanlint: interrupted; no file was changed", err=True)
    else:
        click.echo("nanlint: interrupted", err=True)
    sys.exit(EXIT_INTERRUPTED)


def _adopt(findings, files, baseline_file, write_baseline, add_noqa, errors, diff=False) -> int | None:
    """``--write-baseline`` and ``--add-noqa``: act on the findings; the exit code, or None."""

    if diff and (write_baseline is not None or add_noqa):
        fail("--diff cannot be combined with --write-baseline or --add-noqa (they act on the files as they are)")

    if write_baseline is not None:
        keep = []
        if write_baseline.is_file():
            try:
                keep = baseline.load(write_baseline)
            except baseline.BaselineError:
                keep = []
        try:
            n = baseline.write(write_baseline, findings, [str(p) for p in files], keep)
        except OSError as exc:
            fail(f"cannot write {write_baseline}: {exc.strerror or exc}")
        for line in errors:
            click.echo(f"nanlint: error: {line}", err=True)
        click.echo(f"Recorded {n} finding{'s' if n != 1 else ''} in {write_baseline}.", err=True)
        return EXIT_ERROR if errors else EXIT_OK
    if add_noqa:
        done = noqa.add_noqa_files(findings)
        for line in errors + done.errors:
            click.echo(f"nanlint: error: {line}", err=True)
        for line in done.skipped:
            click.echo(f"nanlint: warning: {line}; no noqa added", err=True)
        click.echo(f"Added {done.added} noqa directive{'s' if done.added != 1 else ''} "
                   f"in {done.files} file{'s' if done.files != 1 else ''}.", err=True)
        return EXIT_ERROR if errors or done.errors else EXIT_OK
    return None


def _baseline_filter(findings, files, baseline_file, errors):
    try:
        recorded = baseline.load(baseline_file)
    except baseline.BaselineError as exc:
        fail(str(exc))
    filtered = baseline.apply(baseline_file, recorded, findings, [str(p) for p in files])
    if filtered.stale:
        n = len(filtered.stale)
        click.echo(f"nanlint: {n} baseline entr{'ies' if n != 1 else 'y'} no longer found (fixed or changed); "
                   f"`nanlint --write-baseline {baseline_file}` drops {'them' if n != 1 else 'it'}", err=True)
    return filtered.new


def _split(value: str | None) -> list[str]:
    if not value:
        return []
    return [v.strip() for v in value.split(",") if v.strip()]


def _unified_diff(path: str, before: bytes, after: bytes) -> str:
    if path.endswith(".ipynb"):

        try:
            cells = notebook.diff(path, before, after)  # per cell, as the sources read
        except (notebook.NotebookError, ValueError, KeyError, TypeError):
            cells = ""
        if cells:
            return cells
        # not readable as cells, or no cell source changed: the raw diff still shows the change
    a = split_lines(before.decode("utf-8", "replace"), keepends=True)
    b = split_lines(after.decode("utf-8", "replace"), keepends=True)
    return "".join(difflib.unified_diff(a, b, fromfile=f"a/{path}", tofile=f"b/{path}"))


@main.command("rule", short_help="Print a rule's page, or list every rule.")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
def rule_cmd(code: str | None, show_all: bool) -> None:
    """Print the page of rule CODE (a code like NAN101 or a name like log-softmax)."""
    if show_all or code is None:
        rows = [("Code", "Name", "Fix", "Default", "Frameworks")]
        for r in all_rules():
            rows.append((r.code, r.name, r.fix or "none", "on" if r.default else "opt-in",
                         ", ".join(r.frameworks) or "-"))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        return
    r = find(code)
    if r is None:
        fail(f"unknown rule {code!r}; `nanlint rule --all` lists them")
        return
    page = catalogue.pages().get(r.code)
    if page is None:
        fail(f"no page for {r.code}")
        return
    click.echo(page.text, nl=False)


@main.command("verify", add_help_option=False, short_help="Prove the fixes by running the fixture harness.",
              context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def verify_cmd(args) -> None:
    """Prove the fixes by execution: run the fixture harness (`nanlint verify --help`)."""
    sys.exit(_component("nanlint.harness.cli").main(list(args)))


@main.command("server", short_help="Run the language server for editors (LSP over stdio).")
def server_cmd() -> None:
    """Speak the Language Server Protocol on standard input and output (needs pygls:
    `python3 -m pip install 'pygls>=2.1,<3' lsprotocol`, the `server` extra). Diagnostics, quick fixes, `# noqa` insertion and
    the rule pages on hover; README.md, "Editors", shows the set-up per editor."""
    sys.exit(_component("nanlint.server").main())


if __name__ == "__main__":  # pragma: no cover
    main()
