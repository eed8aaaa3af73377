// Compile-time stub of androidx.work.WorkerParameters. Never shipped.
// https://developer.android.com/reference/androidx/work/WorkerParameters
package androidx.work;

public final class WorkerParameters {
    private WorkerParameters() {}
}
