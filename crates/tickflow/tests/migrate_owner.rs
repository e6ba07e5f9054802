//! Moving an owner between schedulers: `export_owner`, `import_owner`, the two-phase
//! `freeze_owner` / `commit_owner` / `abort_owner`, and what an import refuses.

use crate::migrate_world;

use migrate_world::*;

/// Two identical worlds run `before` frames; in the second the orc is exported and
/// imported back (through postcard bytes when serde is on). Both then run 150 frames.
fn round_trip_after(before: u64) -> (Game, Game, HandleMap) {
    let (mut a, mut b) = (world(), world());
    let (mut ga, mut gb) = (Game::default(), Game::default());
    run(&mut a, &mut ga, before);
    run(&mut b, &mut gb, before);
    let snap = b.export_owner(ORC);
    #[cfg(feature = "serde")]
    let snap: OwnerSnapshot = postcard::from_bytes(&postcard::to_stdvec(&snap).unwrap()).unwrap();
    let map = b.import_owner(&snap, &mut Bind::default()).unwrap();
    run(&mut a, &mut ga, 150);
    run(&mut b, &mut gb, 150);
    (ga, gb, map)
}

#[test]
fn an_export_imported_back_changes_nothing_the_owner_does() {
    for before in [0, 1, 2, 5, 13, 29] {
        let (ga, gb, _) = round_trip_after(before);
        assert!(ga.of(ORC).len() > 150, "the orc is busy");
        // A tickable is rebuilt by the resolver: its own count starts again (its state is
        // the game's to carry), so the hud lines are compared without it.
        let plain = |g: &Game| -> Vec<String> {
            (g.of(ORC).into_iter())
                .map(|l| match l.contains(" hud ") {
                    true => l.rsplit_once(' ').unwrap().0.to_owned(),
                    false => l,
                })
                .collect()
        };
        same(
            &plain(&ga),
            &plain(&gb),
            &format!("the orc, moved after {before} frames"),
        );
        same(&ga.of(ELF), &gb.of(ELF), "the elf stayed");
    }
}

#[test]
fn the_handle_map_names_every_moved_timer_tick_and_tickable() {
    let mut s = world();
    let mut g = Game::default();
    run(&mut s, &mut g, 3);
    let before = s.timers().list();
    let orc: Vec<_> = before.iter().filter(|t| t.owner == Some(ORC)).collect();
    let snap = s.export_owner(ORC);
    assert_eq!(snap.timer_count(), orc.len());
    assert_eq!(
        (
            snap.tick_count(),
            snap.tickable_count(),
            snap.latent_count()
        ),
        (4, 1, 2)
    );
    assert!(snap.is_complete());
    let map = s.import_owner(&snap, &mut Bind::default()).unwrap();
    assert_eq!(map.timers().len(), orc.len());
    for old in orc {
        let new = map.timer(old.handle).expect("mapped");
        assert_ne!(new, old.handle, "a fresh handle");
        let now = s.timers().info_of(new).unwrap();
        // Everything but the handle is as it was.
        assert_eq!(
            TimerInfo {
                handle: new,
                ..old.clone()
            },
            now
        );
    }
    assert_eq!((map.ticks().len(), map.tickables().len()), (4, 1));
    assert!(map.unlinked_prerequisites().is_empty());
    assert_eq!(map.timer(TimerHandle::default()), None);
}

#[test]
fn a_duplicate_delivery_is_refused_and_changes_nothing() {
    let (mut a, mut b) = (world(), Scheduler::<Game>::new());
    let snap = a.export_owner(ORC);
    assert_eq!(snap.epoch(), 1);
    b.import_owner(&snap, &mut Bind::default()).unwrap();
    let hash = b.state_hash();
    let err = b.import_owner(&snap, &mut Bind::default()).unwrap_err();
    assert_eq!(
        err,
        ImportError::Duplicate {
            owner: ORC,
            epoch: 1,
            imported: 1
        }
    );
    assert!(err.to_string().contains("imported here already"), "{err}");
    assert_eq!(b.state_hash(), hash);
    // Back to `a` (epoch 2), and the stale first move is refused there too.
    let back = b.export_owner(ORC);
    assert_eq!(back.epoch(), 2);
    a.import_owner(&back, &mut Bind::default()).unwrap();
    assert!(matches!(
        a.import_owner(&snap, &mut Bind::default()),
        Err(ImportError::Duplicate {
            epoch: 1,
            imported: 2,
            ..
        })
    ));
    assert_eq!(
        a.export_owner(ORC).epoch(),
        3,
        "epochs keep counting along the owner's moves"
    );
}

#[test]
fn a_failed_import_changes_nothing() {
    let (mut a, mut b) = (world(), Scheduler::new());
    populate(&mut b, ELF, None);
    let mut g = Game::default();
    run(&mut b, &mut g, 4);
    let snap = a.export_owner(ORC);
    let hash = b.state_hash();
    let (timers, ticks) = (b.timers().len(), b.ticks().len());
    let mut refusing = Bind {
        refuse: Some("blink"),
        ..Bind::default()
    };
    let err = b.import_owner(&snap, &mut refusing).unwrap_err();
    assert!(
        matches!(&err, ImportError::Restore(RestoreError::Unbound { kind: "timer", name, .. }) if name == "blink"),
        "{err}"
    );
    // A key in use: the elf's own delay 1 under the orc's owner id is not a conflict, an
    // orc action with the same key is.
    b.latent().delay(ORC, 1, secs(9.0), |_: &mut Game, _| {});
    let hash_with = b.state_hash();
    let err = b.import_owner(&snap, &mut Bind::default()).unwrap_err();
    assert_eq!(
        err,
        ImportError::LatentKeyInUse {
            owner: ORC,
            uuid: 1
        }
    );
    assert_eq!(b.state_hash(), hash_with);
    b.latent().remove(ORC, 1);
    run(&mut b, &mut g, 1); // the removal settles
    assert_ne!(b.state_hash(), hash);
    assert_eq!((b.timers().len(), b.ticks().len()), (timers, ticks));
    // Neither failure used up the move: it imports now.
    b.import_owner(&snap, &mut Bind::default()).unwrap();
}

#[test]
fn prerequisites_on_other_owners_are_relinked_by_name_or_reported() {
    let mut a = world();
    let snap = a.export_owner(ORC);
    // A destination with the same system function: "aim" waits for it again.
    let mut with = Scheduler::<Game>::new();
    let physics = TickSettings::named("world physics").in_group(TickGroup::DuringPhysics);
    with.ticks()
        .add(physics, |g: &mut Game, _| g.log.push("world".into()));
    let map = with.import_owner(&snap, &mut Bind::default()).unwrap();
    assert!(map.unlinked_prerequisites().is_empty());
    let order = with.explain_order();
    assert!(order.contains("world physics"), "{order}");
    // One without it runs "aim" without the edge and says so.
    let mut without = Scheduler::<Game>::new();
    let map = without.import_owner(&snap, &mut Bind::default()).unwrap();
    let (aim, name) = &map.unlinked_prerequisites()[0];
    assert_eq!(name, "world physics");
    assert!(without.ticks().contains(*aim));
}

#[test]
fn a_frozen_owner_stands_still_until_the_abort_puts_it_back() {
    let (mut a, mut b) = (world(), world());
    let (mut ga, mut gb) = (Game::default(), Game::default());
    run(&mut a, &mut ga, 7);
    run(&mut b, &mut gb, 7);
    let snap = b.freeze_owner(ORC).unwrap();
    assert!(b.is_frozen(ORC) && b.freeze_owner(ORC).is_none());
    assert_eq!(
        b.import_owner(&snap, &mut Bind::default()),
        Err(ImportError::Frozen { owner: ORC })
    );
    let calls = gb.of(ORC).len();
    run(&mut b, &mut gb, 30); // the handover takes half a second
    assert_eq!(gb.of(ORC).len(), calls, "frozen items do not run");
    let map = b.abort_owner(ORC).unwrap();
    assert_eq!(map.timers().len(), snap.timer_count());
    assert!(!b.is_frozen(ORC) && b.abort_owner(ORC).is_none());
    assert!(
        matches!(
            b.import_owner(&snap, &mut Bind::default()),
            Err(ImportError::Duplicate { .. })
        ),
        "the freeze's own snapshot is not imported back once aborted: its epoch was used"
    );
    // Shifted by the 30 frames it stood still, the orc does what the unmoved one does,
    // and it kept its own closures (the hud counts on from 7).
    run(&mut a, &mut ga, 100);
    run(&mut b, &mut gb, 100);
    let after = |g: &Game, skip: usize, shift: u64| -> Vec<String> {
        (g.of(ORC).into_iter().skip(skip))
            .filter(|l| !l.contains(" at ") && !l.contains(" hud ")) // tick functions, latent
            .map(|l| shift_frame(&l, shift))
            .collect()
    };
    same(
        &after(&ga, calls, 0),
        &after(&gb, calls, 30),
        "the orc after the abort",
    );
    let huds: Vec<String> = gb
        .of(ORC)
        .into_iter()
        .filter(|l| l.contains(" hud "))
        .collect();
    assert!(
        huds[7].ends_with(" n8") && huds[6].contains(" f7 "),
        "{:?}",
        &huds[5..9]
    );
}

/// `line` with its frame number `f{n}` made `f{n - shift}`.
fn shift_frame(line: &str, shift: u64) -> String {
    (line.split(' '))
        .map(
            |w| match w.strip_prefix('f').and_then(|n| n.parse::<u64>().ok()) {
                Some(n) => format!("f{}", n - shift),
                None => w.to_owned(),
            },
        )
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_commit_drops_the_frozen_owner_and_cancels_its_tasks() {
    let mut s = world();
    let mut g = Game::default();
    s.tasks().spawn(Some(ORC), |cx| async move {
        cx.delay(secs(100.0)).await;
    });
    let snap = s.freeze_owner(ORC).unwrap();
    assert_eq!(snap.tasks_not_moved(), 1);
    assert!(!snap.is_complete());
    run(&mut s, &mut g, 2);
    assert_eq!(s.tasks().len(), 1, "tasks run on until the commit");
    assert!(s.commit_owner(ORC));
    assert!(!s.commit_owner(ORC));
    run(&mut s, &mut g, 2);
    assert_eq!(s.tasks().len(), 0);
    assert!(
        g.of(ORC).is_empty(),
        "no hook ran: the orc moved, it was not cancelled"
    );
}

#[test]
fn an_export_cancels_tasks_and_reports_actions_that_cannot_move() {
    let mut s = world();
    s.tasks().spawn(Some(ORC), |cx| async move {
        cx.delay(secs(100.0)).await;
    });
    s.latent()
        .wait_until(ORC, 9, |_: &Game| false, |_: &mut Game, _| {});
    let snap = s.export_owner(ORC);
    assert_eq!(snap.tasks_not_moved(), 1);
    assert_eq!(snap.latent_not_moved().len(), 1);
    assert_eq!(snap.latent_not_moved()[0].uuid, 9);
    assert_eq!(s.tasks().len(), 0);
    assert_eq!(s.latent().count_for_owner(ORC), 0);
    assert_eq!(s.latent().count_for_owner(ELF), 2);
}

#[test]
fn a_moved_timer_keeps_its_on_cancel_hook_through_the_resolver() {
    let (mut a, mut b) = (world(), Scheduler::<Game>::new());
    let snap = a.export_owner(ORC);
    let mut g = Game::default();
    run(&mut a, &mut g, 1);
    assert!(g.of(ORC).is_empty(), "the export ran no hook");
    b.import_owner(&snap, &mut Bind::default()).unwrap();
    b.remove_owner(ORC);
    run(&mut b, &mut g, 1);
    assert_eq!(g.of(ORC), ["3 cancelled explode"]);
}

#[cfg(feature = "serde")]
#[test]
fn a_snapshot_survives_json_and_postcard_and_is_compact() {
    let mut s = world();
    let mut g = Game::default();
    run(&mut s, &mut g, 11);
    let snap = s.export_owner(ORC);
    let json: OwnerSnapshot = serde_json::from_str(&serde_json::to_string(&snap).unwrap()).unwrap();
    let bytes = postcard::to_stdvec(&snap).unwrap();
    let back: OwnerSnapshot = postcard::from_bytes(&bytes).unwrap();
    assert_eq!((&json, &back), (&snap, &snap));
    // Timers only: one owner with many plain timers.
    let mut t = Scheduler::<Game>::new();
    for k in 0..1000 {
        t.timers()
            .every(millis(100 + k))
            .owner(ORC)
            .name("regen")
            .call(timer_cb(ORC, "regen"));
    }
    let bytes = postcard::to_stdvec(&t.export_owner(ORC)).unwrap();
    let per_timer = bytes.len() as f64 / 1000.0;
    // A handle's tag holds its container's id, which a process hands out in turn: 4 varint
    // bytes for the first 255 containers, 5 after (as in this test binary, where hundreds of
    // tests made schedulers before this one).
    assert!(per_timer < 41.0, "{per_timer} bytes per timer");
}

#[test]
fn an_owner_snapshot_is_send() {
    fn send<T: Send + Sync>() {}
    send::<OwnerSnapshot>();
    send::<HandleMap>();
}

#[test]
fn timers_the_fire_budget_left_due_move_late_and_catch_up_in_order() {
    let budgeted = || {
        let mut s = Scheduler::<Game>::new();
        s.timers().set_fire_budget(Some(1));
        for name in ["a", "b", "c"] {
            let t = s.timers().every(millis(95)).owner(ORC).name(name);
            t.call(timer_cb(ORC, name));
        }
        s
    };
    let (mut a, mut b) = (budgeted(), budgeted());
    let (mut ga, mut gb) = (Game::default(), Game::default());
    // At frame 6 (0.1 s) all three are due (since 0.095 s); one call a frame: two are left due, late.
    run(&mut a, &mut ga, 6);
    run(&mut b, &mut gb, 6);
    let snap = b.export_owner(ORC);
    b.import_owner(&snap, &mut Bind::default()).unwrap();
    run(&mut a, &mut ga, 30);
    run(&mut b, &mut gb, 30);
    assert_eq!(
        ga.of(ORC)[..3],
        [
            "3 a f6 at 67032000 #0",
            "3 b f7 at 67032000 #0",
            "3 c f8 at 67032000 #0"
        ]
    );
    same(&ga.of(ORC), &gb.of(ORC), "late timers");
}

#[test]
fn a_tickable_built_for_another_owner_is_refused() {
    let (mut a, mut b) = (world(), Scheduler::<Game>::new());
    let snap = a.export_owner(ORC);
    let err = b
        .import_owner(
            &snap,
            &mut Bind {
                hud_for: Some(ELF),
                ..Bind::default()
            },
        )
        .unwrap_err();
    assert!(
        matches!(&err, ImportError::Restore(RestoreError::Unbound { kind: "tickable", detail, .. }) if detail.contains("another owner")),
        "{err}"
    );
    assert!(b.timers().is_empty() && b.ticks().is_empty() && b.tickables().is_empty());
}

#[cfg(feature = "serde")]
#[test]
fn damaged_or_foreign_snapshots_are_refused_with_a_reason() {
    use tickflow::snapshot::FORMAT_VERSION;
    let mut a = world();
    let json = serde_json::to_string(&a.export_owner(ORC)).unwrap();
    let import = |text: &str| {
        let snap: OwnerSnapshot = serde_json::from_str(text).unwrap();
        Scheduler::<Game>::new().import_owner(&snap, &mut Bind::default())
    };
    assert!(import(&json).is_ok());
    let version = json.replacen(
        &format!("\"version\":{FORMAT_VERSION}"),
        "\"version\":99",
        1,
    );
    assert!(matches!(
        import(&version),
        Err(ImportError::Restore(RestoreError::Version {
            found: 99,
            ..
        }))
    ));
    // A timer that claims another owner: the snapshot contradicts itself.
    let owner = json.replacen("\"owner\":3", "\"owner\":5", 2);
    let err = import(&owner).unwrap_err();
    assert!(
        matches!(&err, ImportError::Restore(RestoreError::Corrupt { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("corrupted"), "{err}");
    assert!(std::error::Error::source(&err).is_some());
    // Epoch 0 is no move.
    let zero = json.replacen("\"epoch\":1", "\"epoch\":0", 1);
    assert!(matches!(
        import(&zero),
        Err(ImportError::Duplicate { epoch: 0, .. })
    ));
}
