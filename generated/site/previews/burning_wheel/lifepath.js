window.rulesdslPreviews("burning_wheel/lifepath.html", {});
