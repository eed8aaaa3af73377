// Compile-time stub of androidx.work.WorkManager. Never shipped.
// https://developer.android.com/reference/androidx/work/WorkManager
// (static getInstance(Context), enqueueUniqueWork(String, ExistingWorkPolicy, OneTimeWorkRequest) returning an Operation)
package androidx.work;

import android.content.Context;

public abstract class WorkManager {
    public static WorkManager getInstance(Context context) {
        throw new UnsupportedOperationException("stub");
    }

    public abstract Operation enqueueUniqueWork(String uniqueWorkName, ExistingWorkPolicy existingWorkPolicy, OneTimeWorkRequest work);
}
