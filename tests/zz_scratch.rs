#[test]
fn concurrent_enumerate() {
    let hs: Vec<_> = (0..6).map(|i| std::thread::spawn(move || {
        let r = clfilter::backend::list_devices().map(|v| v.into_iter().map(|d| (d.label(), d.available)).collect::<Vec<_>>());
        eprintln!("thread {i}: {r:?}");
        r
    })).collect();
    let rs: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(rs.iter().all(|r| matches!(r, Ok(v) if v.len() == 1)), "{rs:?}");
}
