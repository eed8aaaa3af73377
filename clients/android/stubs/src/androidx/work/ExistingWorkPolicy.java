// Compile-time stub of androidx.work.ExistingWorkPolicy. Never shipped.
// https://developer.android.com/reference/androidx/work/ExistingWorkPolicy
package androidx.work;

public enum ExistingWorkPolicy {
    REPLACE,
    KEEP,
    APPEND,
    APPEND_OR_REPLACE
}
