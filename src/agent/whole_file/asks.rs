//! The asks that follow a reply which changed nothing the request wants:
//! for the other files by name, for one file whole, for the files a change
//! breaks, and fresh sampled tries.

use super::{asking::*, changes::*, handed::*, judge::*, reply::*, selection::*};
use crate::agent::code_text::*;
use crate::agent::kept::kept_names;
use crate::agent::turn::Generation;
use crate::agent::{Conversation, TurnOutcome};
use crate::protocol::Message;
use crate::workspace::WorkspacePath;
use tokio_util::sync::CancellationToken;

impl Conversation {
    /// The changes the reply in `generation` shows, and the text of the
    /// last reply: asked again when it only copies files back, and for the
    /// files its change breaks. `Err` ends the turn.
    pub(super) async fn changes_asked_for(
        &mut self,
        asking: &Asking<'_>,
        mut only_named: Option<WorkspacePath>,
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<(String, Vec<Change>), TurnOutcome> {
        let Asking { prompt, handed, checks, .. } = *asking;
        let mut text = reply_text(generation);
        // A question changes no file. Asked one, a small model copies a
        // file back (main.py for "which log level…"), changes one (the
        // default profile made "production"), or quotes code that leads to
        // the answer (`listen_address()` for "which port…"): asked for the
        // answer alone, it reads the files for one.
        if asking.question {
            // "Can you fix it?": where the model was torn between change
            // and answer and only the question mark made it a question, a
            // reply that shows a handed file changed is the model's own
            // word that the request asks for that change (the 1.5B, asked
            // to work out its answer, wrote playlist.js with the fix).
            let shown_changes = self.changes_shown(&text, prompt, handed, only_named.as_ref());
            if asking.undecided && !shown_changes.is_empty() {
                self.notify("[the reply shows a file changed: the request is taken as asking for that change]");
                return Ok((text, shown_changes));
            }
            // Worked out line by line, the answer is its last line; a
            // working out that ends without one is asked for it, with the
            // working out kept in the conversation.
            if let Some(answer) = answer_line(&text) {
                return Ok((answer, Vec::new()));
            }
            if copies_only(&text, handed) || only_code(&text) || !shown_changes.is_empty() {
                let shown: String = handed.iter().map(HandedFile::shown).collect();
                let notice = "[the reply did not answer the question — asking for the answer…]";
                let ask = "Answer the question in one sentence. Change no file.";
                text = self.ask_again(asking, &shown, ask, notice, generation, cancel).await?;
            }
            return Ok((text, Vec::new()));
        }
        let mut changes = self.changes_shown(&text, prompt, handed, only_named.as_ref());
        // A reply that only copies files back looked at the wrong ones: asked
        // once more for the others by name, a small model writes the change.
        let overlooked = overlooked(&text, prompt, handed, checks).filter(|_| changes.is_empty());
        let asked_by_name = overlooked.is_some();
        if let Some((echoed, others)) = overlooked {
            let names: Vec<String> = others.iter().map(|f| f.path.display().to_string()).collect();
            let ask = match names.as_slice() {
                [one] => format!(
                    "Reply with the whole new content of {one}, changed as asked, in a code block after its path."
                ),
                _ => format!(
                    "Reply with the whole new content of each of {} that must change, each in a code block after its path.",
                    names.join(", ")
                ),
            };
            let shown: String = others.iter().chain(&echoed).map(|f| f.shown()).collect();
            let notice = format!("[the reply only copied files back — asking for {} by name…]", names.join(", "));
            text = self.ask_again(asking, &shown, &ask, &notice, generation, cancel).await?;
            if let [one] = others.as_slice() {
                only_named = Some(one.path.clone());
            }
            changes = self.changes_shown(&text, prompt, handed, only_named.as_ref());
        }
        // Code that is no file's version ("ALTER TABLE users ADD …" for a
        // change to schema.sql), blocks that hold only a path, or the change
        // told in a sentence ("is_even should return `n % 2 == 0`"): asked
        // for the file by name, whole, a small model writes it.
        let unplaced = changes.is_empty() && !asked_by_name;
        if let Some(file) = file_to_ask_for(prompt, &text, handed, checks)
            .filter(|_| unplaced && copied_back(&text, prompt, handed).is_none())
        {
            let path = file.path.display();
            let notice = format!("[the reply changed no file — asking for {path} whole…]");
            (text, changes) = self.file_asked(asking, file, ", changed as asked", &notice, generation, cancel).await?;
        }
        // "Create mathutil.py with is_even" answered with a change elsewhere
        // (a heading for it in README.md): the file asked for is still to be
        // written. Asked for it by name, a small model writes it.
        let unwritten =
            only_named.as_ref().and_then(|path| handed.iter().find(|f| f.path.rel == path.rel)).filter(|f| {
                let written = changes.iter().any(|(_, input)| input["file_path"] == f.path.display());
                !changes.is_empty() && !written && f.text.is_empty() && !self.workspace.exists(&f.path)
            });
        if let Some(file) = unwritten {
            let notice = format!("[the reply did not create {} — asking for it whole…]", file.path.display());
            let (reply, more) = self.file_asked(asking, file, "", &notice, generation, cancel).await?;
            text = reply;
            changes.extend(more.into_iter().filter(|(_, input)| input["file_path"] == file.path.display()));
        }
        let copied = copied_back(&text, prompt, handed).filter(|_| changes.is_empty());
        if let Some(copied) = copied {
            // Still copies: the model sees where the change goes but not
            // what it is. Asked for just the line, it often writes it fixed.
            let others: Vec<&HandedFile> =
                handed.iter().filter(|f| !copied.iter().any(|c| c.path.rel == f.path.rel)).collect();
            (text, changes) =
                self.line_asked(asking, (&copied, &others), only_named.as_ref(), generation, cancel).await?;
        }
        // A change that renames or removes what other files use (`def
        // calc_total` now `def compute_total`, main.py still calling
        // calc_total) breaks them: shown the change and asked for them by
        // name, a small model changes them to match.
        let changed: Vec<HandedFile> = changes.iter().filter_map(|change| changed_file(change, handed)).collect();
        if let Some((stale, users)) = dangling(&changed, handed) {
            let renames = renames(&changed, handed);
            // A declaration renamed: the files that use it are renamed to
            // match, as an editor's rename does, not left to the model.
            if stale.iter().all(|name| renames.iter().any(|(old, _)| old == name)) {
                let what = renames.iter().map(|(old, new)| format!("{old} to {new}")).collect::<Vec<_>>().join(", ");
                for user in users {
                    // A file the change changed too is renamed as it will be,
                    // in one Edit that takes the place of its change.
                    let will_hold = as_changed(user, &changed);
                    let text =
                        renames.iter().fold(will_hold.text.clone(), |text, (old, new)| replace_word(&text, old, new));
                    let path = user.path.display();
                    self.notify(&format!("[{path} uses what the change renames — renaming {what} there too]"));
                    changes.retain(|(_, input)| input["file_path"] != path);
                    changes.push(edit(path, &user.text, &text));
                }
                return Ok((text, changes));
            }
            // A wrapper removed (read_csv_events, which warned and
            // returned read_events(path, fmt="csv")): its calls are made
            // what it returned, as an editor's inline does, not left to
            // the model, which copies its caller back.
            // Only where the request names what goes: else the removal is
            // the model's slip, for the model to undo.
            let removal_asked = stale.iter().all(|name| uses_word(prompt, name));
            if let Some(inlined) = self.inlined(&stale, &changed, handed, &users).filter(|_| removal_asked) {
                for (user, text) in inlined {
                    let path = user.path.display();
                    self.notify(&format!(
                        "[{path} calls what the change removes — calling what it returned there in its place]"
                    ));
                    changes.retain(|(_, input)| input["file_path"] != path);
                    changes.push(edit(path, &user.text, &text));
                }
                return Ok((text, changes));
            }
            let names = users.iter().map(|f| f.path.display()).collect::<Vec<_>>().join(", ");
            // Those that no longer declare it: report.py, changed and still
            // calling read_csv_events, is a user, not where it went.
            let declarers: Vec<&HandedFile> =
                changed.iter().filter(|c| !users.iter().any(|u| u.path == c.path)).collect();
            let declarers = if declarers.is_empty() { changed.iter().collect() } else { declarers };
            let (use_, declare) = match (users.len(), declarers.len()) {
                (1, 1) => ("uses", "declares"),
                (1, _) => ("uses", "declare"),
                (_, 1) => ("use", "declares"),
                _ => ("use", "declare"),
            };
            let stale = stale.join(", ");
            let ask = format!(
                "{names} still {use_} {stale}, which {} no longer {declare}. Reply with the whole new content of \
                 {names}, changed to match, in a code block after its path.",
                declarers.iter().map(|f| f.path.display()).collect::<Vec<_>>().join(", "),
            );
            let notice = format!("[{names} still {use_} {stale} — asking for it to match…]");
            let (reply, matching) =
                self.ask_to_match(asking, &changed, &users, (&ask, &notice), generation, cancel).await?;
            text = reply;
            // A new version of a file the change changed takes the place of
            // the change it holds; a line fixed beside it goes in with it.
            for (_, input) in &matching {
                changes.retain(|(_, earlier)| {
                    let covered = match (earlier["old_string"].as_str(), input["old_string"].as_str()) {
                        (Some(earlier), Some(now)) => now.contains(earlier),
                        _ => true,
                    };
                    earlier["file_path"] != input["file_path"] || !covered
                });
            }
            changes.extend(matching);
        } else if let Some((reshaped, users)) = reshaped(&changed, handed, prompt) {
            // "…and shop.py should call it with €": the prompt asks for a
            // file that uses what the change reshapes, and it was left as is.
            let names = users.iter().map(|f| f.path.display()).collect::<Vec<_>>().join(", ");
            let ask = format!(
                "{}. Reply with the whole new content of {names}, changed as asked, in a code block after its path.",
                reshaped.join("; "),
            );
            let notice = format!("[the prompt asks for {names} too — asking for it…]");
            let (reply, matching) =
                self.ask_to_match(asking, &changed, &users, (&ask, &notice), generation, cancel).await?;
            text = reply;
            changes.extend(matching);
        }
        Ok((text, changes))
    }

    /// Fresh try `n` at the first ask, sampled, and the changes it comes to
    /// through the asks that follow it (sampled too).
    pub(super) async fn fresh_try(
        &mut self,
        n: u32,
        asking: &Asking<'_>,
        only_named: Option<WorkspacePath>,
        first: Vec<Message>,
        cancel: &CancellationToken,
    ) -> Result<(Generation, String, Vec<Change>), TurnOutcome> {
        self.resample = Some(n);
        let tried = async {
            let mut generation = self.whole_file_reply(asking.system, first, cancel).await?;
            let asked = self.changes_asked_for(asking, only_named, &mut generation, cancel).await?;
            let (text, changes) = self.without_kept(asking, asked, &mut generation, cancel).await?;
            Ok((generation, text, changes))
        }
        .await;
        self.resample = None;
        tried
    }

    /// `changes` without what they change of the parts the prompt says stay
    /// as they are ("…but leave the web server's logging as it is": the
    /// 1.5B set every log level to DEBUG), the user told. A reply that
    /// changed only those (the 0.5B scaled the web service, not the worker)
    /// is asked again for its file; one that does so again leaves nothing,
    /// so a fresh try follows.
    pub(super) async fn without_kept(
        &mut self,
        asking: &Asking<'_>,
        (text, changes): (String, Vec<Change>),
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<(String, Vec<Change>), TurnOutcome> {
        let kept = kept_names(asking.prompt);
        let (changes, spared) = spare_kept(changes, asking.handed, &kept);
        let only_kept = spared.first().filter(|_| changes.is_empty()).map(|(file, parts)| (*file, parts.join(", ")));
        let Some((file, parts)) = only_kept else {
            self.tell_spared(&spared);
            return Ok((text, changes));
        };
        let path = file.path.display();
        let notice = format!(
            "[the reply changed only {parts} in {path}, which the request says stays as it is — asking again…]"
        );
        let how = format!(", changed as asked; {parts} stays as it is");
        let (text, again) = self.file_asked(asking, file, &how, &notice, generation, cancel).await?;
        let (changes, spared) = spare_kept(again, asking.handed, &kept);
        self.tell_spared(&spared);
        Ok((text, changes))
    }

    /// Asks for `file` alone, whole, `how` (", changed as asked", " without
    /// old_helper"): the reply's text and the changes it makes to it.
    pub(super) async fn file_asked(
        &mut self,
        asking: &Asking<'_>,
        file: &HandedFile,
        how: &str,
        notice: &str,
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<(String, Vec<Change>), TurnOutcome> {
        let path = file.path.display();
        let ask = format!("Reply with the whole new content of {path}{how}, in a code block after its path.");
        let text = self.ask_again(asking, &file.shown(), &ask, notice, generation, cancel).await?;
        let changes = self.changes_shown(&text, asking.prompt, asking.handed, Some(&file.path));
        Ok((text, changes))
    }

    /// Asks for the `users` of what the `changed` files change, shown
    /// those as they will be: the reply's text and the changes it makes
    /// to `users`.
    pub(super) async fn ask_to_match(
        &mut self,
        asking: &Asking<'_>,
        changed: &[HandedFile],
        users: &[&HandedFile],
        (ask, notice): (&str, &str),
        generation: &mut Generation,
        cancel: &CancellationToken,
    ) -> Result<(String, Vec<Change>), TurnOutcome> {
        // A user the change changed is shown once, as it will be.
        let unchanged_users = users.iter().copied().filter(|u| !changed.iter().any(|c| c.path == u.path));
        let shown: String = changed.iter().chain(unchanged_users).map(HandedFile::shown).collect();
        let text = self.ask_again(asking, &shown, ask, notice, generation, cancel).await?;
        let users: Vec<HandedFile> = users.iter().map(|f| (*f).clone()).collect();
        // Versions of the files only: new code alone is no match.
        let matching: Vec<Change> = self
            .changes_shown(&text, asking.prompt, &users, None)
            .into_iter()
            // Only the users: the changed files are shown as they will be.
            .filter(|(_, input)| users.iter().any(|f| input["file_path"] == f.path.display()))
            .collect();
        // Copied back: asked for the line, as after the first reply.
        match copied_back(&text, asking.prompt, &users).filter(|_| matching.is_empty()) {
            Some(copied) => {
                let changed: Vec<&HandedFile> = changed.iter().collect();
                self.line_asked(asking, (&copied, &changed), None, generation, cancel).await
            }
            None => Ok((text, matching)),
        }
    }
}
