// Compile-time stub of androidx.work.OutOfQuotaPolicy (WorkManager 2.7). Never shipped.
// https://developer.android.com/reference/androidx/work/OutOfQuotaPolicy
package androidx.work;

public enum OutOfQuotaPolicy {
    RUN_AS_NON_EXPEDITED_WORK_REQUEST,
    DROP_WORK_REQUEST
}
