use super::*;

const MINUTE: i64 = 60_000;

#[test]
fn reads_stop_at_their_share_while_money_goes_on_to_the_ceiling() {
    let budget = Budget::new(60);
    let t = 10 * MINUTE + 5_000;
    for i in 1..=45 {
        assert_eq!(budget.admit(Class::Read, 80, false, t), Admission::Go);
        budget.answered(80, false, Reported { weight_1m: Some(80 * i), ..Reported::default() }, t);
    }
    // 3600 used: the 60 % share of 6000 is spent.
    assert_eq!(
        budget.admit(Class::Read, 2, false, t),
        Admission::Refuse(Duration::from_millis(55_000)),
        "refused until the minute rolls over"
    );
    assert_eq!(budget.admit(Class::Money, 4, false, t), Admission::Go);
    assert_eq!(budget.admit(Class::Money, 1, true, t), Admission::Go);
    assert_eq!(budget.usage(t).refused_reads, 1);
    assert_eq!(budget.admit(Class::Read, 2, false, t + MINUTE), Admission::Go, "new minute");
}

#[test]
fn a_read_refused_for_its_weight_reports_the_wait_it_really_needs() {
    let budget = Budget::new(60);
    let t = 10 * MINUTE + 35_000;
    // 3599 of the 3600 share used: a read of 20 does not fit, a read of 1 would.
    budget.answered(0, false, Reported { weight_1m: Some(3_599), ..Reported::default() }, t);
    assert_eq!(budget.reads_blocked_for(t), None, "nothing refused yet");
    assert_eq!(
        budget.admit(Class::Read, 20, false, t),
        Admission::Refuse(Duration::from_millis(25_000))
    );
    assert_eq!(
        budget.reads_blocked_for(t + 1_000),
        Some(Duration::from_millis(24_000)),
        "the 429's Retry-After is the time to the next minute, not 1 s"
    );
    assert_eq!(budget.reads_blocked_for(t + 25_000), None, "the next minute");
}

#[test]
fn money_waits_at_its_ceiling_instead_of_passing_the_limit() {
    let budget = Budget::new(60);
    let t = 3 * MINUTE + 59_000;
    budget.answered(0, false, Reported { weight_1m: Some(5_399), ..Reported::default() }, t);
    assert_eq!(budget.admit(Class::Money, 1, false, t), Admission::Go, "5400 is the ceiling");
    assert_eq!(
        budget.admit(Class::Money, 4, false, t),
        Admission::Wait(Duration::from_millis(1_000))
    );
    assert!(budget.reads_blocked_for(t).is_some());
}

#[test]
fn orders_respect_the_ten_second_and_daily_counts() {
    let budget = Budget::new(60);
    let t = 7 * MINUTE + 1_000;
    budget.answered(0, false, Reported { orders_10s: Some(90), ..Reported::default() }, t);
    assert_eq!(
        budget.admit(Class::Money, 1, true, t),
        Admission::Wait(Duration::from_millis(9_000)),
        "90 of 100 orders in 10 s is the ceiling"
    );
    assert_eq!(budget.admit(Class::Money, 4, false, t), Admission::Go, "lookups still go");
    budget.answered(0, false, Reported { orders_day: Some(180_000), ..Reported::default() }, t);
    assert!(matches!(budget.admit(Class::Money, 1, true, t + 10_000), Admission::Refuse(_)));
}

#[test]
fn an_order_the_exchange_counted_is_not_counted_again() {
    let budget = Budget::new(60);
    // The exchange's window slides: at the start of ours it still holds 80 earlier orders.
    let t = 9 * MINUTE;
    let reported = |n| Reported { orders_10s: Some(n), ..Reported::default() };
    budget.answered(0, false, reported(80), t);
    assert_eq!(budget.admit(Class::Money, 1, true, t), Admission::Go);
    assert_eq!(budget.usage(t).orders_10s, 81, "80 reported, one in flight");
    budget.answered(1, true, reported(81), t);
    assert_eq!(budget.usage(t).orders_10s, 81, "the answer's count holds our order");
    // Seconds later the oldest orders have left the exchange's window.
    for n in 42..=50 {
        assert_eq!(budget.admit(Class::Money, 1, true, t + 4_000), Admission::Go);
        budget.answered(1, true, reported(n), t + 4_000);
    }
    assert_eq!(budget.usage(t + 4_000).orders_10s, 50);
    assert_eq!(budget.admit(Class::Money, 1, true, t + 4_000), Admission::Go);
    budget.answered(1, true, Reported::default(), t + 4_000);
    assert_eq!(budget.usage(t + 4_000).orders_10s, 51, "no count in the answer: ours is added");
}

#[test]
fn the_exchange_count_replaces_ours_once_it_answers() {
    let budget = Budget::new(50);
    let t = MINUTE;
    assert_eq!(budget.admit(Class::Read, 80, false, t), Admission::Go);
    assert_eq!(budget.usage(t).weight_used, 80, "in flight");
    let counts = Reported { weight_1m: Some(2_999), ..Reported::default() };
    budget.answered(80, false, counts, t);
    assert_eq!(budget.usage(t).weight_used, 2_999, "another user of the IP spent the rest");
    assert_eq!(budget.admit(Class::Read, 1, false, t), Admission::Go);
    assert!(matches!(budget.admit(Class::Read, 1, false, t), Admission::Refuse(_)));
    budget.answered(1, false, Reported { weight_1m: Some(12), ..Reported::default() }, t);
    assert_eq!(budget.usage(t).weight_used, 12, "the exchange's window rolled first");
    budget.answered(0, false, Reported::default(), t);
    assert_eq!(budget.usage(t).weight_used, 12);
    assert_eq!(budget.admit(Class::Read, 5, false, t), Admission::Go);
    budget.answered(5, false, Reported::default(), t);
    assert_eq!(budget.usage(t).weight_used, 17, "no count in the answer: ours is kept");
}

#[test]
fn weight_charged_after_the_answer_counts_in_the_minute() {
    let budget = Budget::new(60);
    budget.set_limits(Limits { weight_per_minute: 1200, ..Limits::default() });
    let t = 2 * MINUTE;
    assert_eq!(budget.admit(Class::Read, 20, false, t), Admission::Go);
    budget.answered(20, false, Reported::default(), t);
    budget.charge(Class::Read, 100, t);
    assert_eq!(budget.usage(t).weight_used, 120, "20 before sending, 100 for 2000 fills");
    assert_eq!(budget.usage(t + MINUTE).weight_used, 0);
}

#[tokio::test]
async fn a_marked_call_is_a_read_and_anything_else_money() {
    assert_eq!(current_class(), Class::Money);
    assert_eq!(as_read(async { current_class() }).await, Class::Read);
}

#[tokio::test]
async fn reads_inside_a_scheduled_job_are_background_and_its_other_calls_stay_money() {
    let classes =
        in_background(async { (as_read(async { current_class() }).await, current_class()) });
    assert_eq!(classes.await, (Class::Background, Class::Money));
}

#[test]
fn background_reads_stop_at_their_part_and_leave_the_rest_to_agents() {
    let budget = Budget::new(60);
    budget.set_limits(Limits { weight_per_minute: 1200, ..Limits::default() });
    let t = 4 * MINUTE + 1_000;
    let read = |class, t| {
        let admission = budget.admit(class, 20, false, t);
        budget.answered(20, false, Reported::default(), t);
        admission
    };
    assert_eq!(budget.usage(t).background_limit, 360, "half of the 720 reads may use");
    for _ in 0..18 {
        assert_eq!(read(Class::Background, t), Admission::Go);
    }
    assert_eq!(
        budget.admit(Class::Background, 20, false, t),
        Admission::Refuse(Duration::from_millis(59_000)),
        "360 of its 360 used: the next read waits for the next minute"
    );
    assert_eq!(budget.usage(t).refused_reads, 0, "a paced read is not an agent's refusal");
    for _ in 0..18 {
        assert_eq!(read(Class::Read, t), Admission::Go, "the agents' half");
    }
    assert!(matches!(budget.admit(Class::Read, 20, false, t), Admission::Refuse(_)));
    assert_eq!(read(Class::Background, t + MINUTE), Admission::Go, "a new minute");
}

#[test]
fn background_reads_wait_when_agents_spent_the_read_share() {
    let budget = Budget::new(60);
    budget.set_limits(Limits { weight_per_minute: 1200, ..Limits::default() });
    let t = 4 * MINUTE;
    budget.answered(0, false, Reported { weight_1m: Some(715), ..Reported::default() }, t);
    assert_eq!(
        budget.admit(Class::Background, 20, false, t),
        Admission::Refuse(Duration::from_millis(60_000))
    );
    // A surcharge of a background answer counts in its part.
    budget.charge(Class::Background, 400, t + MINUTE);
    assert!(matches!(budget.admit(Class::Background, 20, false, t + MINUTE), Admission::Refuse(_)));
}

#[tokio::test]
async fn a_paced_read_goes_once_the_clock_reaches_the_next_minute() {
    use std::sync::Arc;
    let budget = Arc::new(Budget::new(60));
    budget.set_limits(Limits { weight_per_minute: 1200, ..Limits::default() });
    let clock = Arc::new(AtomicI64::new(6 * MINUTE + 30_000));
    budget.answered(0, false, Reported { weight_1m: Some(720), ..Reported::default() }, 6 * MINUTE);
    let paced = tokio::spawn({
        let (budget, clock) = (budget.clone(), clock.clone());
        async move {
            let now = || clock.load(Ordering::Relaxed);
            budget.admit_paced(Class::Background, 20, false, now).await
        }
    });
    // The wait is on the clock, not on real time: it goes on until the clock moves.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(!paced.is_finished());
    assert_eq!(budget.usage(6 * MINUTE + 30_000).background_waiting, 1);
    clock.store(7 * MINUTE, Ordering::Relaxed);
    assert_eq!(paced.await.unwrap(), Admission::Go);
    let usage = budget.usage(7 * MINUTE);
    assert_eq!((usage.background_waits, usage.background_waiting), (1, 0));
    assert_eq!(usage.weight_used, 20, "counted in the new minute");
}
