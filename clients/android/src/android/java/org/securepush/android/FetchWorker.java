package org.securepush.android;

import android.content.Context;
import androidx.work.Worker;
import androidx.work.WorkerParameters;
import java.util.Collections;
import org.securepush.client.FetchResult;

/** Fetches one notification's content and replaces the notification shown for it; retried while the server is unreachable. */
public final class FetchWorker extends Worker {
    static final String ID = "securepush.notification_id";

    public FetchWorker(Context context, WorkerParameters parameters) {
        super(context, parameters);
    }

    @Override
    public Result doWork() {
        String id = getInputData().getString(ID);
        if (id == null) return Result.failure();
        FetchResult result = SecurePushAndroid.client(getApplicationContext()).fetch(id);
        switch (result.status()) {
            case FOUND:
                SecurePushAndroid.presenter().showFetched(result.notification());
                return Result.success();
            case GONE:
            case NOT_FOUND:
                SecurePushAndroid.presenter().remove(Collections.singletonList(id));
                return Result.success();
            case UNAVAILABLE:
                return Result.retry();
            default:
                return Result.failure();
        }
    }
}
